import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { humanizeDuration } from './index.ts';

describe('humanizeDuration', () => {
  it('says durations in English and Chinese with at most two units', () => {
    const cases: ReadonlyArray<[number, string, string]> = [
      [120_000, '2 minutes', '2分钟'],
      [60_000, '1 minute', '1分钟'],
      [30_000, '30 seconds', '30秒'],
      [90_000, '1 minute 30 seconds', '1分钟30秒'],
      [5_400_000, '1 hour 30 minutes', '1小时30分钟'],
      [7_200_000, '2 hours', '2小时'],
      [93_784_000, '1 day 2 hours', '1天2小时'],
      [400, 'less than a second', '不到1秒'],
    ];
    for (const [ms, en, zh] of cases) {
      expect(humanizeDuration(ms, 'en'), `${ms}`).toBe(en);
      expect(humanizeDuration(ms, 'zh'), `${ms}`).toBe(zh);
    }
  });

  it('rounds the smaller unit, carrying into the larger one', () => {
    expect(humanizeDuration(119_600, 'en')).toBe('2 minutes');
    expect(humanizeDuration(3_599_999, 'en')).toBe('1 hour');
    expect(humanizeDuration(125_400, 'zh')).toBe('2分钟5秒');
  });

  it('refuses negative or non-finite durations', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      let caught: unknown;
      try {
        humanizeDuration(bad, 'en');
      } catch (err) {
        caught = err;
      }
      expect(isBatonError(caught), String(bad)).toBe(true);
    }
  });
});
