import { DateTime, type DurationLikeObject } from 'luxon';
import { easter } from './easter.ts';

/**
 * The language-neutral meaning of an absolute time expression, filled by the English and Chinese
 * grammars and turned into an instant here, so both languages share one set of calendar rules.
 */

export const Dayparts = ['morning', 'noon', 'afternoon', 'evening', 'night', 'midnight'] as const;
export type Daypart = (typeof Dayparts)[number];

/** The hour a day part means when no time is given ("tomorrow morning", "今晚"). */
const DAYPART_DEFAULT_HOUR: Record<Daypart, number> = {
  morning: 9,
  noon: 12,
  afternoon: 15,
  evening: 19,
  night: 20,
  midnight: 24,
};

export type DaySpec =
  /** today = 0, tomorrow = 1, 大后天 = 3: a fixed day, never rolled forward. */
  | { kind: 'offset'; days: number }
  /**
   * A weekday. `week` 0 = this calendar week (Monday first), 1 = next week ("next monday", 下周一);
   * without `week` it is the next occurrence ("friday", "this friday", "coming friday").
   */
  | { kind: 'weekday'; weekday: number; week?: number; afterToday?: boolean }
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
      /** "monday the 27th": prefer a month where that day falls on this weekday. */
      weekday?: number;
    }
  /** Easter-based holidays: `offset` days from Easter Sunday; without a year, the next one. */
  | { kind: 'easter'; offset: number; year?: number }
  /** "the first friday of next month", "second saturday": the nth weekday of a month. */
  | { kind: 'nthWeekday'; n: number; weekday: number; monthOffset?: number }
  /** A day reached by a calendar shift from now ("in 3 days", "3天后"). */
  | { kind: 'shift'; duration: DurationLikeObject };

export interface TimeSpec {
  hour: number;
  minute: number;
  second: number;
  meridiem?: 'am' | 'pm';
  /** Written on a 24-hour clock ("09:00", Chinese "9:00"): never read as the evening hour. */
  clock24?: boolean;
}

export interface MomentSpec {
  day?: DaySpec;
  time?: TimeSpec;
  daypart?: Daypart;
  /** "end of tomorrow", "eod": the last second of the day (or week/month). */
  endOf?: 'day' | 'week' | 'month';
  /** "3 days after january 12th": a calendar shift applied to the resolved day. */
  shift?: DurationLikeObject;
  /** "in 3 days on friday": the given weekday in the week of the shifted day. */
  weekdayInWeek?: number;
  /** "in four business days": weekdays added to the resolved day. */
  businessDays?: number;
}

type Roll = 'day' | 'week' | 'month' | 'year' | null;
type DayStart = { date: DateTime; roll: Roll } | null;

function startDay(spec: DaySpec | undefined, now: DateTime): DayStart {
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
      return { date: today.plus({ days: ahead }), roll: 'week' };
    }
    case 'easter':
      return easterDay(spec, now);
    case 'nthWeekday':
      return nthWeekdayDay(spec, now);
    case 'shift':
      return { date: now.plus(spec.duration).startOf('day'), roll: null };
    case 'date':
      return dateDay(spec, now);
  }
}

function easterDay(spec: Extract<DaySpec, { kind: 'easter' }>, now: DateTime): DayStart {
  const on = (year: number) => {
    const e = easter(year);
    return DateTime.fromObject(e, { zone: now.zone }).plus({ days: spec.offset });
  };
  if (spec.year !== undefined) return { date: on(spec.year), roll: null };
  const thisYear = on(now.year);
  return { date: thisYear >= now.startOf('day') ? thisYear : on(now.year + 1), roll: null };
}

function nthWeekdayDay(spec: Extract<DaySpec, { kind: 'nthWeekday' }>, now: DateTime): DayStart {
  const on = (monthStart: DateTime) => {
    const first = monthStart.plus({ days: (spec.weekday - monthStart.weekday + 7) % 7 });
    const d = first.plus({ weeks: spec.n - 1 });
    return d.month === monthStart.month ? d : null;
  };
  const month = now.startOf('month').plus({ months: spec.monthOffset ?? 0 });
  const found = on(month);
  if (spec.monthOffset !== undefined || (found && found >= now.startOf('day')))
    return found ? { date: found, roll: null } : null;
  const next = on(month.plus({ months: 1 }));
  return next ? { date: next, roll: null } : null;
}

function calendarDay(now: DateTime, year: number, month: number, day: number, roll: Roll): DayStart {
  const date = DateTime.fromObject({ year, month, day }, { zone: now.zone });
  return date.isValid && date.day === day ? { date, roll } : null;
}

function nextMonthWithDay(now: DateTime, day: number, from: DateTime, weekday?: number): DayStart {
  for (let i = 0; i < 24; i++) {
    const base = from.startOf('month').plus({ months: i });
    const found = calendarDay(now, base.year, base.month, day, 'month');
    if (!found || found.date < from) continue;
    if (weekday === undefined || found.date.weekday === weekday) return found;
  }
  return null;
}

function dateDay(spec: Extract<DaySpec, { kind: 'date' }>, now: DateTime): DayStart {
  if (spec.monthOffset !== undefined) {
    const base = now.startOf('month').plus({ months: spec.monthOffset });
    return calendarDay(now, base.year, base.month, spec.day, null);
  }
  if (spec.yearOffset !== undefined && spec.month !== undefined)
    return calendarDay(now, now.year + spec.yearOffset, spec.month, spec.day, null);
  if (spec.month === undefined) {
    // A day of the month alone: this month, or the first later month that has that day (and that
    // weekday when one was named: "monday the 27th").
    const first = nextMonthWithDay(now, spec.day, now.startOf('day'), spec.weekday);
    return first ?? nextMonthWithDay(now, spec.day, now.startOf('day'));
  }
  if (spec.year === undefined) {
    for (let i = 0; i < 8; i++) {
      const found = calendarDay(now, now.year + i, spec.month, spec.day, 'year');
      if (found && (i > 0 || found.date >= now.startOf('day')))
        return { ...found, roll: i === 0 ? 'year' : null };
    }
    return null;
  }
  return calendarDay(now, spec.year, spec.month, spec.day, null);
}

/** The hour on a 24 h clock (24 = the next midnight), and whether it could still mean +12 h. */
function hourOf(time: TimeSpec, daypart: Daypart | undefined): { hour: number; ambiguous: boolean } {
  const h = time.hour;
  if (time.meridiem === 'am') return { hour: h === 12 ? 0 : h, ambiguous: false };
  if (time.meridiem === 'pm') return { hour: h < 12 ? h + 12 : h, ambiguous: false };
  if (h === 0 || h > 12) return { hour: h, ambiguous: false };
  switch (daypart) {
    case 'morning':
      return { hour: h, ambiguous: false };
    case 'noon':
      return { hour: h <= 5 ? h + 12 : h, ambiguous: false };
    case 'afternoon':
      return { hour: h < 12 ? h + 12 : h, ambiguous: false };
    case 'evening':
    case 'night':
    case 'midnight':
      // "晚上12点" / "tonight at 12" is the coming midnight; small hours stay small ("半夜3点").
      if (h === 12) return { hour: 24, ambiguous: false };
      return { hour: daypart !== 'evening' && h <= 4 ? h : h + 12, ambiguous: false };
    default:
      return { hour: h, ambiguous: h < 12 && !time.clock24 };
  }
}

function at(date: DateTime, hour: number, minute: number, second: number): DateTime {
  const day = date.plus({ days: Math.floor(hour / 24) });
  return DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: hour % 24, minute, second },
    { zone: date.zone },
  );
}

function rollForward(date: DateTime, roll: Exclude<Roll, null>): DateTime {
  if (roll === 'month') {
    // The 31st rolls to the next month that has a 31st, never to a clamped 30th.
    const next = nextMonthWithDay(date, date.day, date.plus({ days: 1 }));
    if (next) return next.date;
  }
  return date.plus(roll === 'day' ? { days: 1 } : roll === 'week' ? { weeks: 1 } : { years: 1 });
}

function addBusinessDays(date: DateTime, n: number): DateTime {
  let d = date;
  for (let left = n; left > 0; ) {
    d = d.plus({ days: 1 });
    if (d.weekday <= 5) left--;
  }
  return d;
}

/**
 * Resolves a spec against `now` (a DateTime in the user's zone). A spec without a fixed day
 * (bare time, weekday, date without year) means its next occurrence; a fixed day in the past stays
 * in the past (the caller then delivers at once). Returns null for impossible dates (Feb 30).
 */
export function resolveMoment(spec: MomentSpec, now: DateTime): DateTime | null {
  const start = startDay(spec.day, now);
  if (!start) return null;
  let { date, roll } = start;
  const hasClock = spec.time !== undefined || spec.daypart !== undefined || spec.endOf !== undefined;
  if (spec.shift) {
    date = date.plus(spec.shift);
    roll = null;
  }
  if (spec.weekdayInWeek !== undefined) date = date.startOf('week').plus({ days: spec.weekdayInWeek - 1 });
  if (spec.businessDays !== undefined) date = addBusinessDays(date, spec.businessDays);

  if (spec.endOf) {
    const end = spec.endOf === 'day' ? date : date.endOf(spec.endOf).startOf('day');
    return at(end, 23, 59, 59);
  }
  if (!hasClock) {
    // A day without a time keeps the time of day of the reference: "tomorrow" is 24 h from now.
    return at(date, now.hour, now.minute, now.second);
  }
  let hour: number;
  let minute = 0;
  let second = 0;
  let ambiguous = false;
  if (spec.time) {
    ({ hour, ambiguous } = hourOf(spec.time, spec.daypart));
    minute = spec.time.minute;
    second = spec.time.second;
  } else {
    hour = DAYPART_DEFAULT_HOUR[spec.daypart as Daypart];
  }
  // "tonight at 1am", "明晚2点": the small hours after that evening, i.e. the next calendar day.
  const late = spec.daypart === 'night' || spec.daypart === 'midnight';
  if (late && hour < 5 && spec.day?.kind === 'offset') hour += 24;

  const isToday = (d: DateTime) => d.hasSame(now, 'day');
  const candidate = (d: DateTime): DateTime => {
    const first = at(d, hour, minute, second);
    // A bare "7" / "9点" read on the day itself means whichever of 7:00 and 19:00 comes next.
    if (ambiguous && isToday(d) && first < now) {
      const later = at(d, hour + 12, minute, second);
      if (later >= now || roll === null) return later;
    }
    return first;
  };
  let result = candidate(date);
  for (let i = 0; roll !== null && result < now && i < 60; i++) {
    date = rollForward(date, roll);
    result = candidate(date);
  }
  return result.isValid ? result : null;
}
