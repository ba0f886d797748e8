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
    // 5/15/2018 (month first), 15/5/2018 (day first when the first field cannot be a month)
    re: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/,
    read: (m) => {
      const a = Number(m[1]);
      const b = Number(m[2]);
      return a > 12 ? date(Number(m[3]), b, a) : date(Number(m[3]), a, b);
    },
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

const FIXED_HOLIDAYS: ReadonlyArray<[string, number, number]> = [
  ['christmas\\s+eve|xmas\\s+eve', 12, 24],
  ['christmas(?:\\s+day)?|xmas', 12, 25],
  ["new\\s+year'?s?\\s+eve", 12, 31],
  ["new\\s+year'?s?(?:\\s+day)?", 1, 1],
  ["valentine'?s?(?:\\s+day)?", 2, 14],
  ["(?:saint|st\\.?)\\s+patrick'?s?(?:\\s+day)?", 3, 17],
  ['halloween', 10, 31],
  ['independence\\s+day', 7, 4],
];
const EASTER_DAYS: ReadonlyArray<[string, number]> = [
  ['easter\\s+monday', 1],
  ['good\\s+friday', -2],
  ['easter(?:\\s+sunday)?', 0],
];

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);
const FIXED_RES = FIXED_HOLIDAYS.map(([pattern, month, day]) => [whole(pattern), month, day] as const);
const EASTER_RES = EASTER_DAYS.map(([pattern, offset]) => [whole(pattern), offset] as const);
const HOLIDAY_NAMES = [...FIXED_HOLIDAYS.map(([n]) => n), ...EASTER_DAYS.map(([n]) => n)].join('|');

/** "christmas", "next easter", "easter monday 2017", "saint patrick 2020". */
export const HOLIDAY_RULE: DateRule = {
  re: new RegExp(`\\b(?:(?:next|following|this|coming)\\s+)?(${HOLIDAY_NAMES})\\b(?:\\s*(\\d{4})\\b)?`),
  read: (m) => {
    const name = m[1] as string;
    const year = yearOf(m[2]);
    for (const [re, month, day] of FIXED_RES) if (re.test(name)) return date(year, month, day);
    for (const [re, offset] of EASTER_RES)
      if (re.test(name)) return { kind: 'easter', offset, ...(year === undefined ? {} : { year }) };
    return null;
  },
};
