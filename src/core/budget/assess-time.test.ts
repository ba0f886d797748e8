import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { ValidationError } from '../errors.ts';
import { assessTime, detectModeChange, timeMode } from './assess-time.ts';

const START = Date.parse('2026-02-09T11:30:00Z');
const at = (elapsedS: number, budgetS: number, items = 0, thresholds = {}) =>
  assessTime({
    startMs: START,
    nowMs: START + elapsedS * 1000,
    budgetMs: budgetS * 1000,
    itemsAnalyzed: items,
    thresholds,
  });

describe('assessTime', () => {
  it('reproduces the protocol example field for field', () => {
    expect(
      assessTime({
        startMs: START,
        nowMs: Date.parse('2026-02-09T12:00:00Z'),
        budgetMs: 4_500_000,
        itemsAnalyzed: 3,
      }),
    ).toEqual({
      start_time: '2026-02-09T11:30:00Z',
      current_time: '2026-02-09T12:00:00Z',
      elapsed_seconds: 1800,
      elapsed_formatted: '30 minutes',
      remaining_seconds: 2700,
      remaining_formatted: '45 minutes',
      budget_seconds: 4500,
      budget_formatted: '75 minutes',
      progress_percentage: 40.0,
      time_status: 'on_track',
      items_per_minute: 0.1,
    });
  });

  it('truncates seconds and floors minutes like the Python int() and // 60', () => {
    const a = at(119.9, 4500, 7);
    expect(a.elapsed_seconds).toBe(119);
    expect(a.elapsed_formatted).toBe('1 minutes');
    expect(a.remaining_seconds).toBe(4380); // int(4380.1)
    expect(a.items_per_minute).toBe(3.5); // round(7 / (119.9 / 60), 2)
    expect(a.progress_percentage).toBe(2.66); // round(2.6644…, 2)
  });

  it('keeps counting below zero once the budget is overrun', () => {
    const a = at(4590, 4500);
    expect(a.remaining_seconds).toBe(-90);
    expect(a.remaining_formatted).toBe('-2 minutes'); // Python: int(-90 // 60) == -2
    expect(a.progress_percentage).toBe(102);
    expect(a.time_status).toBe('time_critical');
  });

  it('reports 0 items per minute before any time has passed or when the clock went back', () => {
    expect(at(0, 600, 5).items_per_minute).toBe(0);
    expect(at(-3, 600, 5).items_per_minute).toBe(0);
  });

  it('is on track above 10 minutes and 25 % left, warning below either, critical below 5 minutes', () => {
    const budget = 2000; // 25 % = 500 s, so only the absolute thresholds matter here
    expect(at(budget - 601, budget).time_status).toBe('on_track');
    expect(at(budget - 600, budget).time_status).toBe('on_track');
    expect(at(budget - 599.999, budget).time_status).toBe('warning');
    expect(at(budget - 300, budget).time_status).toBe('warning'); // the Python's ≤ 300 is not used; see header
    expect(at(budget - 299.999, budget).time_status).toBe('time_critical');
    // 25 % of a 4500 s budget is 1125 s: warning well before the 10-minute mark.
    expect(at(4500 - 1126, 4500).time_status).toBe('on_track');
    expect(at(4500 - 1124, 4500).time_status).toBe('warning');
  });

  it('takes custom thresholds', () => {
    const t = { criticalSeconds: 60, warningSeconds: 120, warningFraction: 0 };
    expect(at(3600 - 200, 3600, 0, t).time_status).toBe('on_track');
    expect(at(3600 - 100, 3600, 0, t).time_status).toBe('warning');
    expect(at(3600 - 59, 3600, 0, t).time_status).toBe('time_critical');
  });

  it('rejects bad input with messages that name the field', () => {
    expect(() => at(0, 0)).toThrow('budgetMs must be a finite number of milliseconds > 0, got 0');
    expect(() => assessTime({ startMs: START, nowMs: Number.NaN, budgetMs: 1, itemsAnalyzed: 0 })).toThrow(
      /^nowMs must be finite epoch milliseconds, got NaN/,
    );
    expect(() => at(0, 60, -1)).toThrow('itemsAnalyzed must be a count ≥ 0, got -1');
    expect(() => at(0, 60, 0, { criticalSeconds: 700 })).toThrow(
      'thresholds.warningSeconds must be a finite number ≥ criticalSeconds (700), got 600',
    );
    expect(() => at(0, 60, 0, { warningFraction: 1 })).toThrow(ValidationError);
  });
});

describe('modes', () => {
  it('accelerates exactly when fewer than 300 s are left', () => {
    expect(timeMode(at(4500 - 300, 4500))).toBe('NORMAL');
    expect(timeMode(at(4500 - 299, 4500))).toBe('ACCELERATE');
  });

  it('reports the change from NORMAL to ACCELERATE once, as a manual clock runs the budget down', async () => {
    const clock = new ManualClock(START);
    const changes = [];
    let previous: ReturnType<typeof assessTime> | undefined;
    for (let minute = 0; minute <= 75; minute++) {
      const a = assessTime({
        startMs: START,
        nowMs: clock.now(),
        budgetMs: 4_500_000,
        itemsAnalyzed: minute,
      });
      const change = detectModeChange(previous, a);
      if (change) changes.push({ minute, ...change });
      previous = a;
      await clock.advance(60_000);
    }
    expect(changes).toEqual([{ minute: 71, from: 'NORMAL', to: 'ACCELERATE' }]);
  });

  it('treats a first assessment that is already critical as a change from NORMAL', () => {
    expect(detectModeChange(undefined, at(290, 300))).toEqual({ from: 'NORMAL', to: 'ACCELERATE' });
    expect(detectModeChange(undefined, at(0, 4500))).toBeUndefined();
  });
});
