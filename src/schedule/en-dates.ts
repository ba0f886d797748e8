import { EN_HOLIDAYS } from './holidays.ts';
import type { DaySpec } from './resolve-moment.ts';

/**
 * English calendar dates on normalized text: "6 jan 2017", "october 14", "16. nov. 2016",
 * "2016-12-22", "5/15/2018" (month first, as in the US, unless the first field is above 12),
 * "23.04.2022" (day first), "20200701", "sep-23-2020", and a few holidays.
 */

const MONTHS = [
  'jan(?:uary)?',
  'feb(?:ruary)?',
  'mar(?:ch)?',
  'apr(?:il)?',
  'may',
  'june?',
  'july?',
  'aug(?:ust)?',
  'sep(?:t(?:ember)?)?',
  'oct(?:ober)?',
  'nov(?:ember)?',
  'dec(?:ember)?',
] as const;
const MONTH_RES = MONTHS.map((m) => new RegExp(`^(?:${m})\\.?$`));
export const MONTH = `(?:${MONTHS.join('|')})\\b\\.?`;
const ORD = '(?:st|nd|rd|th)?';

export function monthNumber(word: string): number | null {
  const i = MONTH_RES.findIndex((re) => re.test(word));
  return i < 0 ? null : i + 1;
}

type DateDay = Extract<DaySpec, { kind: 'date' }>;

function date(year: number | undefined, month: number, day: number): DateDay | null {
  if (month < 1 || month > 12 || day < 1 || day > 31) return null;
  if (year !== undefined && (year < 1000 || year > 9999)) return null;
  return { kind: 'date', ...(year === undefined ? {} : { year }), month, day };
}

const yearOf = (s: string | undefined) => (s === undefined ? undefined : Number(s));
/** "26" → 2026: a two-digit year is this century's. */
const fullYear = (s: string) => (s.length === 2 ? 2000 + Number(s) : Number(s));

export interface DateRule {
  re: RegExp;
  read(m: RegExpExecArray): DaySpec | null;
}

/** Tried in order; each reads a whole date. */
export const DATE_RULES: readonly DateRule[] = [
  {
    // 2016-12-22, 2016/12/22, 2016.12.22
    re: /\b(\d{4})([-/.])(\d{1,2})\2(\d{1,2})\b/,
    read: (m) => date(Number(m[1]), Number(m[3]), Number(m[4])),
  },
  {
    // 5/15/2018, 3/17/26 (month first), 15/5/2018 (day first when the first field cannot be a month)
    re: /\b(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})\b/,
    read: (m) => {
      const a = Number(m[1]);
      const b = Number(m[2]);
      const year = fullYear(m[3] as string);
      return a > 12 ? date(year, b, a) : date(year, a, b);
    },
  },
  {
    // 3/17, 31/12 (no year: the next one); 6·18 (China's shopping days are written so)
    re: /\b(\d{1,2})[/·](\d{1,2})\b(?![/·]|\d)/,
    read: (m) => {
      const a = Number(m[1]);
      const b = Number(m[2]);
      return a > 12 ? date(undefined, b, a) : date(undefined, a, b);
    },
  },
  {
    // 9-1 20:00: a month-day with a dash only right before a clock time (else "3-5" is a range)
    re: /\b(\d{1,2})-(\d{1,2})(?=\s+\d{1,2}:\d{2})/,
    read: (m) => date(undefined, Number(m[1]), Number(m[2])),
  },
  {
    // 23.04.2022, 23-04-2022 (day first)
    re: /\b(\d{1,2})([.-])(\d{1,2})\2(\d{4})\b/,
    read: (m) => date(Number(m[4]), Number(m[3]), Number(m[1])),
  },
  {
    // 20200701
    re: /\b((?:19|20)\d{2})(\d{2})(\d{2})\b/,
    read: (m) => date(Number(m[1]), Number(m[2]), Number(m[3])),
  },
  {
    // sep-23-2020, 2020/sep/23, 23/sep/2020, 23-2020-september: one month name, one year
    re: /\b([a-z]+\.?|\d{1,4})([-/])([a-z]+\.?|\d{1,4})\2([a-z]+|\d{1,4})\b/,
    read: (m) => {
      const fields = [m[1], m[3], m[4]] as string[];
      const month = fields.map(monthNumber).find((n) => n !== null);
      const years = fields.filter((f) => /^\d{4}$/.test(f));
      const days = fields.filter((f) => /^\d{1,2}$/.test(f));
      if (!month || years.length !== 1 || days.length !== 1) return null;
      return date(Number(years[0]), month, Number(days[0]));
    },
  },
  {
    // 6 jan 2017, 16. nov. 2016, the 1st of january, 23rd december
    re: new RegExp(
      `\\b(?:(?:next|this|coming)\\s+)?(?:the\\s+)?(\\d{1,2})${ORD}\\.?\\s*(?:of\\s+)?(${MONTH})(?:,?\\s*(\\d{4})\\b)?`,
    ),
    read: (m) => {
      const month = monthNumber(m[2] as string);
      return month === null ? null : date(yearOf(m[3]), month, Number(m[1]));
    },
  },
  {
    // october 14, oct.23, january 24th 2019, jan 22, 2018, feb 2th
    re: new RegExp(
      `\\b(?:(?:next|this|coming)\\s+)?(${MONTH})\\s*(?:the\\s+)?(\\d{1,2})${ORD}(?![\\d:]|\\s*[ap]m\\b)(?:,?\\s*(\\d{4})\\b)?`,
    ),
    read: (m) => {
      const month = monthNumber(m[1] as string);
      return month === null ? null : date(yearOf(m[3]), month, Number(m[2]));
    },
  },
];

const HOLIDAY_RES = EN_HOLIDAYS.map(([pattern, rule]) => [new RegExp(`^(?:${pattern})$`), rule] as const);
const HOLIDAY_NAMES = EN_HOLIDAYS.map(([pattern]) => pattern).join('|');

/** "christmas", "next easter", "easter monday 2017", "thanksgiving day 2026", "mlk day". */
export const HOLIDAY_RULE: DateRule = {
  re: new RegExp(
    `\\b(?:(?:next|following|this|coming)\\s+)?(${HOLIDAY_NAMES})(?![a-z])(?:,?\\s*(\\d{4})\\b)?`,
  ),
  read: (m) => {
    const name = m[1] as string;
    const year = yearOf(m[2]);
    for (const [re, rule] of HOLIDAY_RES)
      if (re.test(name)) return { kind: 'holiday', rule, ...(year === undefined ? {} : { year }) };
    return null;
  },
};
