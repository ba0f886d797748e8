import { isClockDuration, toLuxon } from './duration-parts.ts';
import { DATE_RULES, HOLIDAY_RULE, MONTH, monthNumber } from './en-dates.ts';
import { DURATION_SOURCE, type EnglishDuration, readEnglishDuration } from './en-duration.ts';
import { normalizeEnglish } from './en-normalize.ts';
import { ZONE_RE, ZONES } from './en-zones.ts';
import { NEGATIVE_OFFSET, type Reading } from './reading.ts';
import type { Daypart, MomentSpec } from './resolve-moment.ts';

/**
 * The English grammar. Each rule below takes one part out of the (normalized) text: an offset,
 * a date, a day word, a weekday, a clock time, a day part. What is left must be filler words
 * ("at", "on", "the", ",") or the text is not understood; this keeps "2 weeks before easter"
 * from being half-read as "2 weeks".
 */

const D = DURATION_SOURCE;
const WD =
  '(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun)s?\\b';
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const weekdayOf = (word: string) => WEEKDAYS.indexOf(word.slice(0, 3)) + 1;
const FILLER =
  /\b(?:at|on|the|in|of|by|around|about|approximately|approx|for|and|o'clock|sharp|exactly|please|this)\b|[,.\-@~()]/g;
/**
 * Words that make the rest a deadline, not a delivery time: "before friday" is no instant to deliver
 * at (Friday at this hour is already too late), so it is refused rather than half-read. "by" is a
 * deadline too, but "by 6pm" names the instant itself: it is read only with a clock time.
 */
const DEADLINE = /\b(?:before|until|till|(?:no|not)\s+later\s+than)\b/;
const BY = /\bby\b/;

interface State {
  spec: MomentSpec;
  weekday?: { weekday: number; week?: number; afterToday?: boolean; plusWeeks?: number };
  fromNow?: EnglishDuration;
  anchored?: boolean;
  year?: number;
  /** Parts read from lone numbers only ("5", "2 2") are too ambiguous to stand alone. */
  loneParts?: number;
  /** "this time tomorrow": the day's time is the reference's, so a day must be named. */
  sameTime?: boolean;
}

interface Rule {
  re: RegExp;
  /** Returns false to leave the match in the text (it then fails the leftover check). */
  apply(m: RegExpExecArray, s: State): boolean;
}

const isLate = (d: Daypart) => d === 'evening' || d === 'night';

function setDaypart(s: State, daypart: Daypart): boolean {
  const current = s.spec.daypart;
  if (current === undefined) s.spec.daypart = daypart;
  // "tonight … in the evening" agree; "tomorrow morning … at night" do not.
  else if (current !== daypart) return isLate(current) && isLate(daypart);
  return true;
}

function setDay(s: State, day: MomentSpec['day'], daypart?: Daypart): boolean {
  if (s.spec.day || !day) return false;
  s.spec.day = day;
  return daypart ? setDaypart(s, daypart) : true;
}

function setTime(
  s: State,
  hour: number,
  minute: number,
  second: number,
  meridiem?: string,
  clock24?: boolean,
): boolean {
  if (s.spec.time || hour > 24 || minute > 59 || second > 59) return false;
  // "14pm", "0am" are not times; "24:30" neither (24 only as 24:00, the coming midnight).
  if (meridiem && (hour < 1 || hour > 12)) return false;
  if (hour === 24 && (minute > 0 || second > 0)) return false;
  s.spec.time = { hour, minute, second, ...(meridiem ? { meridiem: meridiem as 'am' | 'pm' } : {}) };
  if (clock24 && !meridiem) s.spec.time.clock24 = true;
  return true;
}

const LONE_NUMBER: Rule = {
  // A lone number left over is the hour if there is none yet ("10, tonight"). Never a day of the
  // month: "friday, 9 30" must not become 09:00 on some Friday the 30th.
  re: /\b(\d{1,2})\b(?![:\d])/,
  apply: (m, s) => {
    const ok = !s.spec.time && setTime(s, Number(m[1]), 0, 0);
    if (ok) s.loneParts = (s.loneParts ?? 0) + 1;
    return ok;
  },
};

const MONTH_OFFSET: Readonly<Record<string, number>> = { this: 0, next: 1, following: 1 };

/** "15 at 8:00", "15, 8pm": a day of the month first, then an explicit clock time. */
const DAY_THEN_TIME: Rule = {
  re: /^\s*(\d{1,2})\s*(?:,|\bat\b|@)\s*(?=\d{1,2}(?::\d{2}|\s*[ap]m\b))/,
  apply: (m, s) => dayOfMonth(s, Number(m[1])),
};

const NTH = '(?:([1-5])(?:st|nd|rd|th)|(last))';
const OF_MONTH = `(?:of|in)\\s+(?:the\\s+)?(?:(next|this|following)\\s+month|(month)|(${MONTH}))`;

function ofMonth(m: RegExpExecArray, at: number): { monthOffset?: number; month?: number } | null {
  if (m[at]) return { monthOffset: MONTH_OFFSET[m[at] as string] as number };
  if (m[at + 1]) return {};
  if (m[at + 2]) {
    const month = monthNumber(m[at + 2] as string);
    return month === null ? null : { month };
  }
  return null;
}

const RULES: readonly Rule[] = [
  DAY_THEN_TIME,
  {
    re: ZONE_RE,
    apply: (m, s) => {
      s.spec.zone = ZONES[m[1] as string];
      return true;
    },
  },
  {
    // "the day after thanksgiving", "the day before christmas eve", "the day after june 3rd"
    re: /\bthe\s+day\s+(after|before)\s+(?!tomorrow\b|yesterday\b)(?=[a-z0-9])/,
    apply: (m, s) => {
      if (s.spec.shift) return false;
      s.spec.shift = { days: m[1] === 'after' ? 1 : -1 };
      s.anchored = true;
      return true;
    },
  },
  {
    re: /\b(?:at\s+)?(?:this|the\s+same|same)\s+time\b/,
    apply: (_, s) => {
      s.sameTime = true;
      return true;
    },
  },
  {
    re: new RegExp(`(${D})\\s+(from|after|before)\\s+(?!now\\b)`),
    apply: (m, s) => {
      const d = readEnglishDuration(m[1] as string);
      if (!d || d.businessDays) return false;
      const sign = m[2] === 'before' ? -1 : 1;
      s.spec.shift = Object.fromEntries(Object.entries(d.parts).map(([k, v]) => [k, sign * v]));
      s.anchored = true;
      return true;
    },
  },
  {
    re: new RegExp(
      `\\b(?:in|within|after)\\s+(${D})(?:\\s+(?:from\\s+now|later|hence|time))?|(${D})\\s+(?:from\\s+(?:now|today)|after\\s+today|later|hence|afterwards?|time)\\b`,
    ),
    apply: (m, s) => {
      const d = readEnglishDuration((m[1] ?? m[2]) as string);
      if (!d) return false;
      s.fromNow = d;
      return true;
    },
  },
  {
    re: new RegExp(
      `\\b(?:by\\s+)?(?:the\\s+)?end\\s+of\\s+(?:the\\s+)?(?:(day|today|tomorrow)|(this\\s+|next\\s+)?(week|month)|(this\\s+|next\\s+)?${WD})`,
    ),
    apply: (m, s) => {
      if (m[1]) {
        s.spec.endOf = 'day';
        return setDay(s, { kind: 'offset', days: m[1] === 'tomorrow' ? 1 : 0 });
      }
      if (m[3]) {
        s.spec.endOf = m[3] as 'week' | 'month';
        if (m[2]?.trim() !== 'next') return setDay(s, { kind: 'offset', days: 0 });
        return setDay(
          s,
          m[3] === 'week'
            ? { kind: 'weekday', weekday: 1, week: 1 }
            : { kind: 'date', day: 1, monthOffset: 1 },
        );
      }
      s.spec.endOf = 'day';
      const week = m[4]?.trim() === 'next' ? { week: 1 } : {};
      return setDay(s, { kind: 'weekday', weekday: weekdayOf(m[5] as string), ...week });
    },
  },
  ...[...DATE_RULES, HOLIDAY_RULE].map(
    (rule): Rule => ({ re: rule.re, apply: (m, s) => setDay(s, rule.read(m) ?? undefined) }),
  ),
  {
    // "the second tuesday of next month", "last friday of march", "the first friday of the month"
    re: new RegExp(`\\b(?:the\\s+)?${NTH}\\s+${WD}\\s+${OF_MONTH}`),
    apply: (m, s) => {
      const month = ofMonth(m, 4);
      if (!month) return false;
      const n = m[2] ? -1 : Number(m[1]);
      return setDay(s, { kind: 'nthWeekday', n, weekday: weekdayOf(m[3] as string), ...month });
    },
  },
  {
    // "the 2nd friday", "first monday": this month's, or next month's when it is past
    re: new RegExp(`\\b(?:the\\s+)?([1-5])(?:st|nd|rd|th)\\s+${WD}`),
    apply: (m, s) => setDay(s, { kind: 'nthWeekday', n: Number(m[1]), weekday: weekdayOf(m[2] as string) }),
  },
  {
    // "the last day of the month", "the last day of next month", "the last day of february"
    re: new RegExp(`\\b(?:the\\s+)?last\\s+day\\s+${OF_MONTH}`),
    apply: (m, s) => {
      const month = ofMonth(m, 1);
      return month !== null && setDay(s, { kind: 'monthEnd', ...month });
    },
  },
  {
    // "the friday after next": the next one but one
    re: new RegExp(`\\b(?:the\\s+)?${WD}\\s+after\\s+next\\b`),
    apply: (m, s) => {
      if (s.weekday) return false;
      s.weekday = { weekday: weekdayOf(m[1] as string), afterToday: true, plusWeeks: 1 };
      return true;
    },
  },
  {
    re: /\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:day\s+)?of\s+(?:the\s+)?(next|this|following)\s+month\b/,
    apply: (m, s) =>
      setDay(s, { kind: 'date', day: Number(m[1]), monthOffset: MONTH_OFFSET[m[2] as string] as number }),
  },
  { re: /\b(?:the\s+)?day\s+after\s+tomorrow\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: 2 }) },
  { re: /\b(?:the\s+)?day\s+before\s+yesterday\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: -2 }) },
  {
    re: /\b(?:the\s+)?(?:next|following)\s+day\b|\bthe\s+day\s+after\b/,
    apply: (_, s) => setDay(s, { kind: 'offset', days: 1 }),
  },
  { re: /\btomorrow\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: 1 }) },
  { re: /\byesterday\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: -1 }) },
  { re: /\btoday\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: 0 }) },
  { re: /\b(?:tonight|this\s+night)\b/, apply: (_, s) => setDay(s, { kind: 'offset', days: 0 }, 'night') },
  {
    re: /\bthis\s+(morning|afternoon|evening)\b/,
    apply: (m, s) => setDay(s, { kind: 'offset', days: 0 }, m[1] as Daypart),
  },
  {
    re: new RegExp(
      `\\b(?:on\\s+)?(?:the\\s+)?${WD}\\s+(?:of\\s+)?(?:the\\s+)?(next|following|this|last)\\s+week\\b`,
    ),
    apply: (m, s) => weekdayIn(s, m[1] as string, m[2] as string),
  },
  {
    re: new RegExp(`\\b(next|following|this|last)\\s+week\\s*,?\\s*(?:on\\s+)?(?:the\\s+)?${WD}`),
    apply: (m, s) => weekdayIn(s, m[2] as string, m[1] as string),
  },
  {
    re: new RegExp(`\\b(next|following|last|this\\s+coming|this\\s+upcoming|coming|upcoming|this)?\\s*${WD}`),
    apply: (m, s) => {
      if (s.weekday) return false;
      const weekday = weekdayOf(m[2] as string);
      const q = m[1]?.replace(/\s+/g, ' ');
      if (q === 'next' || q === 'following') s.weekday = { weekday, week: 1 };
      else if (q === 'last') s.weekday = { weekday, week: -1 };
      else if (q && q !== 'this') s.weekday = { weekday, afterToday: true };
      else s.weekday = { weekday };
      return true;
    },
  },
  {
    re: /\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)?\b(?![:\d])|\b(\d{1,2})(?:st|nd|rd|th)\b|\bon\s+(\d{1,2})\b(?![:\d]|\s*[ap]m\b)/,
    apply: (m, s) => dayOfMonth(s, Number(m[1] ?? m[2] ?? m[3])),
  },
  {
    re: /\b(\d{1,2}):(\d{2})(?::(\d{2}))?(?!\d)\s*([ap]m\b)?/,
    apply: (m, s) =>
      setTime(s, Number(m[1]), Number(m[2]), Number(m[3] ?? 0), m[4], /^0\d/.test(m[1] as string)),
  },
  { re: /\b(\d{1,2})\s*([ap]m)\b/, apply: (m, s) => setTime(s, Number(m[1]), 0, 0, m[2]) },
  { re: /\b(\d{1,2})\s*o'clock\b/, apply: (m, s) => setTime(s, Number(m[1]), 0, 0) },
  { re: /\b(?:at\s+)?noon\b/, apply: (_, s) => setTime(s, 12, 0, 0, 'pm') },
  { re: /\b(?:at\s+)?midnight\b/, apply: (_, s) => setDaypart(s, 'midnight') },
  {
    re: /\b(?:at|around|about|by|for|approximately|approx|@)\s+(\d{1,2})\b(?![:\d.])(?!\s*(?:st|nd|rd|th)\b)/,
    apply: (m, s) => setTime(s, Number(m[1]), 0, 0),
  },
  {
    re: /\b(?:in\s+the\s+|at\s+)?(?:early\s+|late\s+)?(morning|afternoon|evening|night)\b/,
    apply: (m, s) => setDaypart(s, m[1] as Daypart),
  },
  {
    re: /\b(?:in\s+)?(\d{4})\b/,
    apply: (m, s) => {
      if (s.year !== undefined) return false;
      s.year = Number(m[1]);
      return true;
    },
  },
  LONE_NUMBER,
];

function weekdayIn(s: State, word: string, which: string): boolean {
  if (s.weekday) return false;
  s.weekday = { weekday: weekdayOf(word), week: which === 'last' ? -1 : which === 'this' ? 0 : 1 };
  return true;
}

/** "tomorrow morning at 8pm", "tonight at 9am" contradict themselves; "tonight at 1am" does not. */
function agrees(time: NonNullable<MomentSpec['time']>, daypart: Daypart): boolean {
  if (!time.meridiem) return true;
  const h = time.hour;
  if (time.meridiem === 'pm') return daypart !== 'morning' || h === 12;
  if (daypart === 'night' || daypart === 'midnight') return h === 12 || h < 5;
  return daypart === 'morning';
}

function dayOfMonth(s: State, day: number): boolean {
  if (day < 1 || day > 31) return false;
  return setDay(s, { kind: 'date', day });
}

const NOW = /^(?:right\s+)?now$|^(?:immediately|asap|as soon as possible|right away|straight away)$/;
const NEGATIVE = new RegExp(`(?:^|\\s)(?:in\\s+)?(?:-|−|minus\\s+)\\s*(?=${D})`);
const AGO = new RegExp(`^(${D})\\s+ago$`);
const BARE = new RegExp(`^(?:for\\s+)?(${D})$`);

function finish(s: State): Reading | null {
  const { spec } = s;
  const weekday = s.weekday;
  if (s.fromNow) {
    const { parts, businessDays } = s.fromNow;
    if (spec.day || s.anchored) return null;
    if (businessDays !== undefined) {
      spec.day = { kind: 'offset', days: 0 };
      spec.businessDays = businessDays;
    } else if (!spec.time && !spec.daypart && !spec.endOf && !weekday) {
      return { kind: 'relative', duration: parts };
    } else if (isClockDuration(parts)) {
      return null; // "in 2 hours at 5pm" contradicts itself
    } else {
      spec.day = { kind: 'shift', duration: toLuxon(parts) };
    }
  }
  if (weekday) {
    const plain = weekday.week === undefined && !weekday.afterToday && !weekday.plusWeeks;
    if (!spec.day) spec.day = { kind: 'weekday', ...weekday };
    else if (!plain)
      return null; // "next friday, march 17": two days named
    else if (spec.day.kind === 'shift' || s.anchored) spec.weekdayInWeek = weekday.weekday;
    else if (spec.day.kind === 'date' && spec.day.month === undefined && spec.day.monthOffset === undefined)
      spec.day.weekday = weekday.weekday;
    // "tuesday, march 17", "friday christmas", "tomorrow on friday": the day must be that weekday.
    else spec.weekday = weekday.weekday;
  }
  if (s.sameTime && (!spec.day || spec.time || spec.daypart || spec.endOf)) return null;
  if (spec.zone !== undefined && !spec.time) return null;
  if (spec.time && spec.daypart && !agrees(spec.time, spec.daypart)) return null;
  if (s.year !== undefined) {
    if (spec.day?.kind !== 'date' || spec.day.year !== undefined || spec.day.month === undefined) return null;
    spec.day.year = s.year;
  }
  if (s.anchored && !spec.day) return null;
  if (!spec.day && !spec.time && !spec.daypart && !spec.endOf) return null;
  const parts = [spec.day, spec.time, spec.daypart, spec.endOf].filter((p) => p !== undefined).length;
  if (s.loneParts !== undefined && s.loneParts >= parts && !weekday) return null;
  return { kind: 'absolute', spec };
}

/** Reads an English time expression; null when it is not (entirely) understood. */
export function parseEn(input: string): Reading | null {
  const text = normalizeEnglish(input);
  if (NOW.test(text)) return { kind: 'relative', duration: {} };
  if (NEGATIVE.test(text)) return { kind: 'rejected', reason: NEGATIVE_OFFSET };
  const ago = AGO.exec(text);
  if (ago) {
    // "3 days ago" is understood and past: delivered at once, like any time already gone.
    const d = readEnglishDuration(ago[1] as string);
    if (!d || d.businessDays !== undefined) return null;
    return { kind: 'relative', duration: d.parts, ago: true };
  }
  const bare = BARE.exec(text);
  if (bare) {
    const d = readEnglishDuration(bare[1] as string);
    if (d && d.businessDays === undefined) return { kind: 'relative', duration: d.parts };
  }
  const state: State = { spec: {} };
  let rest = ` ${text} `;
  for (const rule of RULES) {
    const m = rule.re.exec(rest);
    if (!m || !rule.apply(m, state)) continue;
    rest = `${rest.slice(0, m.index)} ${rest.slice(m.index + m[0].length)}`;
  }
  const deadline = DEADLINE.exec(rest) ?? (state.spec.time ? null : BY.exec(rest));
  if (deadline)
    return { kind: 'rejected', reason: `"${deadline[0]}" names a deadline, not a time to deliver at` };
  const unread = rest.replace(FILLER, ' ').trim();
  // Name what was left over, when something was read: "at a few" → "a few" is not understood.
  if (unread !== '' && unread !== text.trim()) {
    return {
      kind: 'rejected',
      reason: `"${unread.replace(/\s+/g, ' ')}" is not understood as part of the time`,
    };
  }
  if (unread !== '') return null;
  return finish(state);
}
