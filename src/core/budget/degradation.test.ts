import { describe, expect, it } from 'vitest';
import { assessTime, type TimeAssessment } from './assess-time.ts';
import { DEFAULT_DEGRADATION_TABLE, defineDegradationTable, shouldSkip } from './degradation.ts';

const START = Date.parse('2026-02-09T11:30:00Z');
/** An assessment of a 75-minute budget with `remainingS` seconds left. */
const left = (remainingS: number): TimeAssessment =>
  assessTime({
    startMs: START,
    nowMs: START + (4500 - remainingS) * 1000,
    budgetMs: 4_500_000,
    itemsAnalyzed: 0,
  });
/** A large budget, so only the absolute thresholds (not 25 %) decide. */
const leftOfDay = (remainingS: number): TimeAssessment =>
  assessTime({
    startMs: START,
    nowMs: START + (2000 - remainingS) * 1000,
    budgetMs: 2_000_000,
    itemsAnalyzed: 0,
  });

describe('shouldSkip under 300 s left', () => {
  const a = left(299);
  it('skips the full-text download with the protocol wording', () => {
    expect(shouldSkip(a, 'download_full')).toEqual({
      skip: true,
      reason: 'TIME_CRITICAL: Skip full-text download',
      alternative: 'Use abstract only',
      level: 'critical',
      action: 'skip',
    });
  });
  it('runs the quick summary instead of deep analysis', () => {
    expect(shouldSkip(a, 'deep_analysis')).toMatchObject({
      skip: true,
      reason: 'TIME_CRITICAL: Skip deep analysis',
      alternative: 'Quick summary only',
      action: 'cheap',
    });
  });
  it('still searches ("search only")', () => {
    expect(shouldSkip(a, 'search')).toMatchObject({ skip: false, action: 'normal', level: 'critical' });
  });
  it('skips any other kind, naming it, or uses cached data', () => {
    expect(shouldSkip(a, 'web_fetch')).toMatchObject({
      skip: true,
      reason: 'TIME_CRITICAL: Skip web_fetch',
      alternative: 'Use cached data or skip',
      action: 'cheap',
    });
  });
});

describe('shouldSkip with 300–600 s left', () => {
  const a = leftOfDay(450);
  it('uses the abstract (key items only) instead of the full download', () => {
    expect(shouldSkip(a, 'download_full')).toEqual({
      skip: true,
      reason: 'ACCELERATE: Use abstract only',
      alternative: 'Prioritize key items only',
      level: 'warning',
      action: 'cheap',
    });
  });
  it('runs the medium (cheap) analysis, searches normally, runs other kinds normally', () => {
    expect(shouldSkip(a, 'deep_analysis')).toMatchObject({ action: 'cheap', level: 'warning' });
    expect(shouldSkip(a, 'search')).toMatchObject({ skip: false, reason: 'OK', action: 'normal' });
    expect(shouldSkip(a, 'web_fetch')).toMatchObject({ skip: false, alternative: 'Proceed normally' });
  });
  it('treats exactly 300 s left as warning, not critical', () => {
    expect(shouldSkip(leftOfDay(300), 'download_full').level).toBe('warning');
  });
});

describe('shouldSkip with time to spare', () => {
  it('proceeds normally with every kind', () => {
    for (const kind of ['download_full', 'deep_analysis', 'search', 'other'])
      expect(shouldSkip(left(2700), kind)).toEqual({
        skip: false,
        reason: 'OK',
        alternative: 'Proceed normally',
        level: 'normal',
        action: 'normal',
      });
  });
  it('is in warning under 25 % of the budget even with more than 10 minutes left', () => {
    expect(shouldSkip(left(1000), 'download_full').level).toBe('warning');
  });
  it('takes the more cautious of status and remaining seconds (assessments from the Python)', () => {
    const python = { remaining_seconds: 450, time_status: 'on_track' as const };
    expect(shouldSkip(python, 'download_full').level).toBe('warning');
    expect(shouldSkip({ remaining_seconds: 300, time_status: 'time_critical' }, 'x').level).toBe('critical');
  });
});

describe('defineDegradationTable', () => {
  it('overrides one level of one kind and keeps the rest', () => {
    const table = defineDegradationTable({
      rules: {
        search: { warning: { action: 'cheap', reason: 'ACCELERATE: fewer queries', alternative: 'Top 3' } },
      },
    });
    expect(shouldSkip(leftOfDay(450), 'search', table)).toMatchObject({
      action: 'cheap',
      alternative: 'Top 3',
    });
    expect(shouldSkip(leftOfDay(100), 'search', table).action).toBe('normal');
    expect(shouldSkip(leftOfDay(100), 'download_full', table).action).toBe('skip');
  });
  it('takes other thresholds', () => {
    const table = defineDegradationTable({ thresholds: { criticalSeconds: 60, warningSeconds: 120 } });
    expect(
      shouldSkip({ remaining_seconds: 200, time_status: 'on_track' }, 'download_full', table).action,
    ).toBe('normal');
    expect(
      shouldSkip({ remaining_seconds: 59, time_status: 'on_track' }, 'download_full', table).action,
    ).toBe('skip');
  });
  it('rejects bad rules and thresholds, naming the field', () => {
    expect(() =>
      defineDegradationTable({
        rules: { search: { critical: { action: 'later' as 'skip', reason: '', alternative: '' } } },
      }),
    ).toThrow(
      'degradation.rules.search.critical.action must be one of "skip", "cheap", "normal", got "later"',
    );
    expect(() => defineDegradationTable({ thresholds: { warningSeconds: 10 } })).toThrow(
      'degradation.thresholds.warningSeconds must be a finite number ≥ criticalSeconds (300), got 10',
    );
  });
  it('cannot be changed for everyone through the shared default', () => {
    expect(() => {
      (DEFAULT_DEGRADATION_TABLE.rules.search as { critical?: unknown }).critical = undefined;
    }).toThrow(TypeError);
  });
});
