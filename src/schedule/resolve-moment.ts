import type { DateTime, DurationLikeObject } from 'luxon';
import { luxon } from './luxon.ts';
import { type DaySpec, nextMonthWithDay, type Roll, startDay } from './resolve-day.ts';

export type { DaySpec } from './resolve-day.ts';

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
  /** "tuesday, march 17", "3月6日星期五": the weekday the day must fall on. */
  weekday?: number;
  /** "3pm UTC", "北京时间下午5点": the IANA zone the clock time is read in, instead of the user's. */
  zone?: string;
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
  return luxon().DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour: hour % 24, minute, second },
    { zone: date.zone },
  );
}

function rollForward(date: DateTime, roll: Exclude<Roll, null>): DateTime | null {
  if (typeof roll === 'function') return roll(date);
  if (roll === 'month') {
    // The 31st rolls to the next month that has a 31st, never to a clamped 30th.
    const next = nextMonthWithDay(date, date.day, date.plus({ days: 1 }));
    if (next) return next;
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

const WEEKDAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

function weekdayMismatch(date: DateTime, weekday: number | undefined): { error: string } | null {
  if (weekday === undefined || date.weekday === weekday) return null;
  const [is, not] = [WEEKDAY_NAMES[date.weekday - 1], WEEKDAY_NAMES[weekday - 1]];
  return { error: `${date.toISODate()} is a ${is}, not a ${not}: the weekday does not match the date` };
}

/**
 * Resolves a spec against `now` (a DateTime in the user's zone). A spec without a fixed day
 * (bare time, weekday, date without year) means its next occurrence; a fixed day in the past stays
 * in the past (the caller then delivers at once). Impossible days (Feb 30, a weekday that does not
 * match the date) give `{ error }`.
 */
export function resolveMoment(spec: MomentSpec, now: DateTime): DateTime | { error: string } {
  if (spec.zone !== undefined) {
    const { zone, ...rest } = spec;
    const there = resolveMoment(rest, now.setZone(zone));
    return there instanceof luxon().DateTime ? there.setZone(now.zone) : there;
  }
  const start = startDay(spec.day, now);
  if ('error' in start) return start;
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
    return weekdayMismatch(date, spec.weekday) ?? at(end, 23, 59, 59);
  }
  if (!hasClock) {
    // A day without a time keeps the time of day of the reference: "tomorrow" is 24 h from now.
    return weekdayMismatch(date, spec.weekday) ?? at(date, now.hour, now.minute, now.second);
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
    const next = rollForward(date, roll);
    if (!next) return { error: 'the date does not exist' };
    date = next;
    result = candidate(date);
  }
  if (!result.isValid) return { error: 'the date does not exist' };
  return weekdayMismatch(date, spec.weekday) ?? result;
}
