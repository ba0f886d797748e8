import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { formatDuration, MAX_DURATION_MS, parseDuration } from './duration.ts';

describe('ManualClock', () => {
  it('fires timers in due order and shows each its own due time', async () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const seen: Array<[string, number]> = [];
    clock.setTimer(300, () => seen.push(['b', clock.now()]));
    clock.setTimer(100, () => seen.push(['a', clock.now()]));
    clock.setTimer(300, () => seen.push(['c', clock.now()]));
    await clock.advance(250);
    expect(seen).toEqual([['a', Date.UTC(2026, 0, 1) + 100]]);
    await clock.advance(50);
    expect(seen.map((s) => s[0])).toEqual(['a', 'b', 'c']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('lets code awaiting one timer arm the next within the same advance', async () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const loop = async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        ticks.push(clock.now());
      }
    };
    const done = loop();
    await clock.advance(30);
    await done;
    expect(ticks).toEqual([10, 20, 30]);
  });

  it('rejects a sleep when its signal aborts and disarms the timer', async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    const slept = clock.sleep(1_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps monotonic time steady when the wall clock jumps', () => {
    const clock = new ManualClock(1_000);
    clock.setWallTime(0);
    expect(clock.now()).toBe(0);
    expect(clock.monotonic()).toBe(0);
  });
});

describe('parseDuration', () => {
  it.each([
    [90_000, 90_000],
    ['90s', 90_000],
    ['75m', 4_500_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1.5s', 1_500],
    ['2d', 172_800_000],
    ['1500', 1_500],
  ])('reads %j as %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    ['-5s'],
    ['soon'],
    [''],
    [-1],
    [Number.NaN],
    ['5 parsecs'],
    [1.5],
    ['1.5'],
    [1e20],
    [Number.POSITIVE_INFINITY],
    ['99999999999999999999h'],
    ['101y'],
    [`${'9'.repeat(400)}s`],
    [MAX_DURATION_MS + 1],
  ])('rejects %j naming the field', (bad) => {
    expect(() => parseDuration(bad as string, 'task.timeout')).toThrow(
      /^task\.timeout must be a whole number of milliseconds from 0 to /,
    );
  });

  it('accepts up to 100 years, rounding unit fractions to whole milliseconds', () => {
    expect(parseDuration(MAX_DURATION_MS)).toBe(MAX_DURATION_MS);
    expect(parseDuration('36525d')).toBe(MAX_DURATION_MS);
    expect(parseDuration('1.0005s')).toBe(1_001);
    expect(Number.isInteger(parseDuration('0.3333s'))).toBe(true);
  });

  it('formats durations compactly', () => {
    expect(formatDuration(4_500_000)).toBe('1h15m');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(250)).toBe('250ms');
  });
});
