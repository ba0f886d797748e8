import { describe, expect, it } from 'vitest';
import { roundTo2 } from './round-like-python.ts';

describe('roundTo2 (Python round(x, 2))', () => {
  it('rounds the exact binary value, where x * 100 would cross the midpoint', () => {
    // Python: round(51.235, 2) == 51.23 and round(2.675, 2) == 2.67 (both are stored just below .xx5).
    expect(roundTo2(51.235)).toBe(51.23);
    expect(roundTo2(2.675)).toBe(2.67);
    expect(roundTo2(1.005)).toBe(1);
    expect(Math.round(51.235 * 100) / 100).toBe(51.24); // the naive way is wrong here
  });

  it('rounds exact ties to even, as Python does', () => {
    expect(roundTo2(0.125)).toBe(0.12);
    expect(roundTo2(0.375)).toBe(0.38);
    expect(roundTo2(0.625)).toBe(0.62);
    expect(roundTo2(-0.125)).toBe(-0.12);
    expect(roundTo2(10_000_000_000_000.125)).toBe(10_000_000_000_000.12);
  });

  it('matches exact decimal rounding on random values away from ties', () => {
    let seed = 7;
    for (let i = 0; i < 20_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      const x = (seed / 2_147_483_648) * 500 - 100;
      if (Number.isInteger(x * 8)) continue;
      const exact = Math.sign(x) * Number(Math.abs(x).toFixed(2));
      expect(roundTo2(x)).toBe(exact || 0);
    }
  });

  it('keeps whole and two-decimal values as they are', () => {
    expect(roundTo2(40)).toBe(40);
    expect(roundTo2(0.1)).toBe(0.1);
    expect(roundTo2(-0)).toBe(0);
  });
});
