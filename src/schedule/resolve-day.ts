import type { DateTime, DurationLikeObject } from 'luxon';
import { type HolidayRule, holidayDay, nthWeekdayOf } from './holidays.ts';
import { luxon } from './luxon.ts';

/** The day part of a time expression, and the first calendar day it can mean. */

export type DaySpec =
  /** today = 0, tomorrow = 1, 大后天 = 3: a fixed day, never rolled forward. */
  | { kind: 'offset'; days: number }
  /**
   * A weekday. `week` 0 = this calendar week (Monday first), 1 = next week ("next monday", 下周一),
   * -1 = last week; without `week` it is the next occurrence ("friday", "this friday"),
   * `afterToday` skips today ("coming thursday"), `plusWeeks` adds weeks ("friday after next").
   */
  | { kind: 'weekday'; weekday: number; week?: number; afterToday?: boolean; plusWeeks?: number }
  /** A calendar day; missing year or month means its next occurrence. */
  | {
      kind: 'date';
      year?: number;
      month?: number;
      day: number;
      /** 下个月15号: the month counted from this one. */
      monthOffset?: number;
      /** 明年3月1日: the year counted from this one. */
      yearOffset?: number;
      /** A weekday said with a day of the month alone: "monday the 27th" picks a month where it is. */
      weekday?: number;
    }
  /** A named day (holiday, lunar date, solar term); without a year, the next one. */
  | { kind: 'holiday'; rule: HolidayRule; year?: number; yearOffset?: number }
  /**
   * "the first friday of next month", "last friday of march", "十月第一个星期一": the nth (or last,
   * n = -1) weekday of a month, named (`month`), counted from this one (`monthOffset`), or this
   * month's when still ahead, else next month's.
   */
  | { kind: 'nthWeekday'; n: number; weekday: number; month?: number; monthOffset?: number }
  /** "the last day of next month", "本月最后一天". */
  | { kind: 'monthEnd'; month?: number; monthOffset?: number }
  /** A day reached by a calendar shift from now ("in 3 days", "3天后"). */
  | { kind: 'shift'; duration: DurationLikeObject };

/**
 * How a day moves to its next occurrence when the moment on it is already past: by a unit, by a
 * function (holidays: next year's date by their own rule), or not at all (`null`: a fixed day).
 */
export type Roll = 'day' | 'week' | 'month' | 'year' | ((date: DateTime) => DateTime | null) | null;
export type DayStart = { date: DateTime; roll: Roll } | { error: string };

const NO_SUCH_DAY: DayStart = { error: 'the date does not exist' };

function calendarDay(now: DateTime, year: number, month: number, day: number): DateTime | null {
  const date = luxon().DateTime.fromObject({ year, month, day }, { zone: now.zone });
  return date.isValid && date.day === day ? date : null;
}

/** The first day on or after `from` that is day `day` of its month (and that weekday, if given). */
export function nextMonthWithDay(
  now: DateTime,
  day: number,
  from: DateTime,
  weekday?: number,
): DateTime | null {
  for (let i = 0; i < 24; i++) {
    const base = from.startOf('month').plus({ months: i });
    const found = calendarDay(now, base.year, base.month, day);
    if (!found || found < from) continue;
    if (weekday === undefined || found.weekday === weekday) return found;
  }
  return null;
}

function dateDay(spec: Extract<DaySpec, { kind: 'date' }>, now: DateTime): DayStart {
  const today = now.startOf('day');
  let date: DateTime | null;
  let roll: Roll = null;
  if (spec.monthOffset !== undefined) {
    const base = now.startOf('month').plus({ months: spec.monthOffset });
    date = calendarDay(now, base.year, base.month, spec.day);
  } else if (spec.month === undefined) {
    // A day of the month alone: this month, or the first later month that has that day (and that
    // weekday when one was named: "monday the 27th").
    date = nextMonthWithDay(now, spec.day, today, spec.weekday) ?? null;
    return date ? { date, roll: spec.weekday === undefined ? 'month' : null } : NO_SUCH_DAY;
  } else if (spec.year !== undefined || spec.yearOffset !== undefined) {
    date = calendarDay(now, spec.year ?? now.year + (spec.yearOffset ?? 0), spec.month, spec.day);
  } else {
    // Without a year: this year's, or the next year that has it (Feb 29).
    date = null;
    for (let i = 0; i < 8 && !date; i++) {
      const found = calendarDay(now, now.year + i, spec.month, spec.day);
      if (found && (i > 0 || found >= today)) date = found;
    }
    roll = 'year';
  }
  return date ? { date, roll } : NO_SUCH_DAY;
}

function holidayStart(spec: Extract<DaySpec, { kind: 'holiday' }>, now: DateTime): DayStart {
  const on = (year: number): DateTime | null => {
    const d = holidayDay(spec.rule, year);
    return d ? calendarDay(now, d.year, d.month, d.day) : null;
  };
  if (spec.year !== undefined || spec.yearOffset !== undefined) {
    const date = on(spec.year ?? now.year + (spec.yearOffset ?? 0));
    return date ? { date, roll: null } : NO_SUCH_DAY;
  }
  // The next one: lunar holidays of last lunar year can still be ahead (腊八 in January).
  const after = (from: DateTime): DateTime | null => {
    for (let year = from.year - 1; year <= from.year + 2; year++) {
      const date = on(year);
      if (date && date >= from) return date;
    }
    return null;
  };
  const date = after(now.startOf('day'));
  return date ? { date, roll: (d) => after(d.plus({ days: 1 })) } : NO_SUCH_DAY;
}

function nthWeekdayStart(spec: Extract<DaySpec, { kind: 'nthWeekday' }>, now: DateTime): DayStart {
  const on = (monthStart: DateTime): DateTime | null => {
    const d = nthWeekdayOf(monthStart.year, monthStart.month, spec.n, spec.weekday);
    return d ? calendarDay(now, d.year, d.month, d.day) : null;
  };
  const today = now.startOf('day');
  const thisMonth = now.startOf('month');
  if (spec.monthOffset !== undefined) {
    const date = on(thisMonth.plus({ months: spec.monthOffset }));
    return date ? { date, roll: null } : NO_SUCH_DAY;
  }
  if (spec.month !== undefined) {
    // A named month: this year's when still ahead, else next year's.
    const inYear = (year: number) =>
      on(luxon().DateTime.fromObject({ year, month: spec.month }, { zone: now.zone }));
    const first = inYear(now.year);
    if (first && first >= today) return { date: first, roll: (d) => inYear(d.year + 1) };
    const next = inYear(now.year + 1);
    return next ? { date: next, roll: null } : NO_SUCH_DAY;
  }
  const found = on(thisMonth);
  if (found && found >= today) return { date: found, roll: null };
  const next = on(thisMonth.plus({ months: 1 }));
  return next ? { date: next, roll: null } : NO_SUCH_DAY;
}

function monthEndStart(spec: Extract<DaySpec, { kind: 'monthEnd' }>, now: DateTime): DayStart {
  if (spec.month !== undefined) {
    let month = luxon().DateTime.fromObject({ year: now.year, month: spec.month }, { zone: now.zone });
    if (month.endOf('month') < now.startOf('day')) month = month.plus({ years: 1 });
    return { date: month.endOf('month').startOf('day'), roll: null };
  }
  const month = now.startOf('month').plus({ months: spec.monthOffset ?? 0 });
  return { date: month.endOf('month').startOf('day'), roll: null };
}

export function startDay(spec: DaySpec | undefined, now: DateTime): DayStart {
  const today = now.startOf('day');
  if (!spec) return { date: today, roll: 'day' };
  switch (spec.kind) {
    case 'offset':
      return { date: today.plus({ days: spec.days }), roll: null };
    case 'weekday': {
      if (spec.week !== undefined)
        return { date: today.startOf('week').plus({ days: 7 * spec.week + spec.weekday - 1 }), roll: null };
      let ahead = (spec.weekday - today.weekday + 7) % 7;
      if (ahead === 0 && spec.afterToday) ahead = 7;
      if (spec.plusWeeks) return { date: today.plus({ days: ahead + 7 * spec.plusWeeks }), roll: null };
      return { date: today.plus({ days: ahead }), roll: 'week' };
    }
    case 'holiday':
      return holidayStart(spec, now);
    case 'nthWeekday':
      return nthWeekdayStart(spec, now);
    case 'monthEnd':
      return monthEndStart(spec, now);
    case 'shift':
      return { date: now.plus(spec.duration).startOf('day'), roll: null };
    case 'date':
      return dateDay(spec, now);
  }
}
