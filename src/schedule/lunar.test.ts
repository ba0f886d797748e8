import { describe, expect, it } from 'vitest';
import { holidayDay, nthWeekdayOf } from './holidays.ts';
import { lunarToSolar, lunarYearEnd, solarTermDay } from './lunar.ts';

const ymd = (d: { year: number; month: number; day: number } | null) =>
  d ? `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}` : null;

describe('the Chinese calendar (lunar-javascript)', () => {
  it('gives the published dates, including 春节 2027 where ICU is a day late', () => {
    expect(ymd(lunarToSolar(2025, 1, 1))).toBe('2025-01-29');
    expect(ymd(lunarToSolar(2026, 1, 1))).toBe('2026-02-17');
    expect(ymd(lunarToSolar(2027, 1, 1))).toBe('2027-02-06');
    expect(ymd(lunarToSolar(2026, 8, 15))).toBe('2026-09-25');
    expect(ymd(lunarToSolar(2027, 5, 5))).toBe('2027-06-09');
    expect(ymd(lunarToSolar(2027, 1, 15))).toBe('2027-02-20');
  });

  it('puts 除夕 on the last day of the lunar year, the 29th when 腊月 is short', () => {
    expect(ymd(lunarYearEnd(2025))).toBe('2026-02-16');
    expect(ymd(lunarYearEnd(2026))).toBe('2027-02-05');
    expect(lunarToSolar(2026, 12, 30)).toBeNull();
    expect(lunarToSolar(2026, 13, 1)).toBeNull();
  });

  it('finds 清明 and 冬至 by their solar terms', () => {
    expect(ymd(solarTermDay('qingming', 2026))).toBe('2026-04-05');
    expect(ymd(solarTermDay('dongzhi', 2026))).toBe('2026-12-22');
    expect(ymd(holidayDay({ kind: 'term', term: 'qingming' }, 2027))).toBe('2027-04-05');
  });

  it('counts nth and last weekdays of a month for rule-based holidays', () => {
    expect(ymd(nthWeekdayOf(2026, 11, 4, 4))).toBe('2026-11-26'); // Thanksgiving
    expect(ymd(nthWeekdayOf(2026, 5, -1, 1))).toBe('2026-05-25'); // Memorial Day
    expect(ymd(nthWeekdayOf(2027, 1, 3, 1))).toBe('2027-01-18'); // MLK Day
    expect(nthWeekdayOf(2026, 4, 5, 1)).toBeNull(); // April 2026 has four Mondays
  });
});
