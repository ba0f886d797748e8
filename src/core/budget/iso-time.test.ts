import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.ts';
import { formatIsoSeconds } from './iso-time.ts';

const viaDate = (ms: number) => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, -5)}Z`;

describe('formatIsoSeconds', () => {
  it('writes the protocol example instants', () => {
    expect(formatIsoSeconds(Date.parse('2026-02-09T11:30:00Z'))).toBe('2026-02-09T11:30:00Z');
    expect(formatIsoSeconds(Date.parse('2026-01-16T14:30:00Z'))).toBe('2026-01-16T14:30:00Z');
  });

  it('agrees with Date for random instants across four-digit years, before and after 1970', () => {
    let seed = 12345;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(-62_167_219_200_000 + next() * (253_402_300_799_999 + 62_167_219_200_000));
      expect(formatIsoSeconds(ms)).toBe(viaDate(ms));
    }
  });

  it('gets leap days and century years right', () => {
    for (const day of [
      '2000-02-29',
      '2024-02-29',
      '1900-03-01',
      '2100-02-28',
      '1600-02-29',
      '0000-01-01',
      '9999-12-31',
    ])
      expect(formatIsoSeconds(Date.parse(`${day}T23:59:59Z`))).toBe(`${day}T23:59:59Z`);
  });

  it('floors to the second the instant falls in, also before the epoch', () => {
    expect(formatIsoSeconds(Date.parse('2026-02-09T12:00:00Z') + 999.9)).toBe('2026-02-09T12:00:00Z');
    expect(formatIsoSeconds(-1)).toBe('1969-12-31T23:59:59Z');
  });

  it('falls back to the expanded year form outside 0000–9999', () => {
    const ms = Date.parse('+010000-01-01T00:00:00Z');
    expect(formatIsoSeconds(ms)).toBe('+010000-01-01T00:00:00Z');
  });

  it('rejects a non-time, naming the field', () => {
    expect(() => formatIsoSeconds(Number.NaN, 'nowMs')).toThrow(ValidationError);
    expect(() => formatIsoSeconds(9e15, 'nowMs')).toThrow(/^nowMs must be epoch milliseconds/);
  });
});
