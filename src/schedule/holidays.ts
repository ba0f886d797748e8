import type { DateTime } from 'luxon';
import { easter } from './easter.ts';
import { type CivilDate, lunarToSolar, lunarYearEnd, type SolarTerm, solarTermDay } from './lunar.ts';
import { luxon } from './luxon.ts';

/**
 * Named days, as rules rather than tables of dates: fixed Gregorian days, the nth (or last) weekday
 * of a month (US federal holidays), days counted from Easter, Chinese lunar days and two solar
 * terms. date-holidays was measured and not adopted: 1.8 s to import, ~31 MB with its
 * dependencies, and its Chinese entries are the days off (春节 spans three days), not the festival.
 */

export type HolidayRule =
  | { kind: 'fixed'; month: number; day: number }
  /** `n` = 1…5, or -1 for the last such weekday; `plus` days added after (Black Friday). */
  | { kind: 'nth'; month: number; n: number; weekday: number; plus?: number }
  | { kind: 'easter'; plus: number }
  | { kind: 'lunar'; month: number; day: number }
  /** 除夕: the last day of the lunar year. */
  | { kind: 'lunarEnd' }
  | { kind: 'term'; term: SolarTerm };

/** The nth (n ≥ 1) or last (n = -1) `weekday` (1 = Monday) of a month; null when there is none. */
export function nthWeekdayOf(year: number, month: number, n: number, weekday: number): CivilDate | null {
  const first = luxon().DateTime.utc(year, month, 1);
  if (!first.isValid || n === 0 || n < -1 || n > 5) return null;
  let d: DateTime;
  if (n === -1) {
    const last = first.endOf('month').startOf('day');
    d = last.minus({ days: (last.weekday - weekday + 7) % 7 });
  } else {
    d = first.plus({ days: ((weekday - first.weekday + 7) % 7) + 7 * (n - 1) });
  }
  return d.month === month ? { year: d.year, month: d.month, day: d.day } : null;
}

function plusDays(date: CivilDate | null, days: number): CivilDate | null {
  if (!date || days === 0) return date;
  const d = luxon().DateTime.utc(date.year, date.month, date.day).plus({ days });
  return { year: d.year, month: d.month, day: d.day };
}

// Lunar conversions cost ~50 µs each and a reading may try four years: keep the answers.
const memo = new Map<string, CivilDate | null>();

/**
 * The holiday's day for `year`: the Gregorian year for Gregorian rules, the lunar year for lunar
 * ones (腊八 of lunar 2026 falls in January 2027).
 */
export function holidayDay(rule: HolidayRule, year: number): CivilDate | null {
  const key = `${Object.values(rule).join(':')}|${year}`;
  let day = memo.get(key);
  if (day === undefined) {
    day = computeDay(rule, year);
    if (memo.size > 10_000) memo.clear();
    memo.set(key, day);
  }
  return day;
}

function computeDay(rule: HolidayRule, year: number): CivilDate | null {
  switch (rule.kind) {
    case 'fixed': {
      const d = luxon().DateTime.utc(year, rule.month, rule.day);
      return d.isValid && d.day === rule.day ? { year, month: rule.month, day: rule.day } : null;
    }
    case 'nth':
      return plusDays(nthWeekdayOf(year, rule.month, rule.n, rule.weekday), rule.plus ?? 0);
    case 'easter':
      return plusDays(easter(year), rule.plus);
    case 'lunar':
      return lunarToSolar(year, rule.month, rule.day);
    case 'lunarEnd':
      return lunarYearEnd(year);
    case 'term':
      return solarTermDay(rule.term, year);
  }
}

const fixed = (month: number, day: number): HolidayRule => ({ kind: 'fixed', month, day });
const nth = (month: number, n: number, weekday: number, plus?: number): HolidayRule => ({
  kind: 'nth',
  month,
  n,
  weekday,
  ...(plus ? { plus } : {}),
});
const fromEaster = (plus: number): HolidayRule => ({ kind: 'easter', plus });
const lunar = (month: number, day: number): HolidayRule => ({ kind: 'lunar', month, day });
const MON = 1;
const THU = 4;
const SUN = 7;

/** English names (lowercase, normalized text), as regex sources; US rules where countries differ. */
export const EN_HOLIDAYS: ReadonlyArray<[string, HolidayRule]> = [
  ['christmas\\s+eve|xmas\\s+eve', fixed(12, 24)],
  ['christmas(?:\\s+day)?|xmas(?:\\s+day)?', fixed(12, 25)],
  ['boxing\\s+day', fixed(12, 26)],
  ["new\\s+year'?s?\\s+eve", fixed(12, 31)],
  ["new\\s+year'?s?(?:\\s+day)?", fixed(1, 1)],
  ["valentine'?s?(?:\\s+day)?", fixed(2, 14)],
  ["(?:saint|st\\.?)\\s+patrick'?s?(?:\\s+day)?", fixed(3, 17)],
  ["april\\s+fool'?s?(?:\\s+day)?", fixed(4, 1)],
  ['earth\\s+day', fixed(4, 22)],
  ['groundhog\\s+day', fixed(2, 2)],
  ['flag\\s+day', fixed(6, 14)],
  ['juneteenth', fixed(6, 19)],
  ['independence\\s+day|(?:the\\s+)?4th\\s+of\\s+july', fixed(7, 4)],
  ['halloween', fixed(10, 31)],
  ["veterans'?\\s+day|armistice\\s+day", fixed(11, 11)],
  [
    "martin\\s+luther\\s+king(?:\\s*,?\\s+jr\\.?)?(?:'s)?(?:\\s+day)?|mlk(?:\\s+jr\\.?)?\\s+day",
    nth(1, 3, MON),
  ],
  ["president'?s'?\\s+day|washington'?s\\s+birthday", nth(2, 3, MON)],
  ["mother'?s'?\\s+day", nth(5, 2, SUN)],
  ['memorial\\s+day', nth(5, -1, MON)],
  ["father'?s'?\\s+day", nth(6, 3, SUN)],
  ['labou?r\\s+day', nth(9, 1, MON)],
  ["columbus\\s+day|indigenous\\s+peoples'?\\s+day", nth(10, 2, MON)],
  ['thanksgiving(?:\\s+day)?', nth(11, 4, THU)],
  ['black\\s+friday', nth(11, 4, THU, 1)],
  ['cyber\\s+monday', nth(11, 4, THU, 4)],
  ['easter\\s+monday', fromEaster(1)],
  ['good\\s+friday', fromEaster(-2)],
  ['maundy\\s+thursday|holy\\s+thursday', fromEaster(-3)],
  ['palm\\s+sunday', fromEaster(-7)],
  ['ash\\s+wednesday', fromEaster(-46)],
  ['ascension\\s+day', fromEaster(39)],
  ['pentecost(?:\\s+sunday)?|whit\\s+sunday', fromEaster(49)],
  ['easter(?:\\s+sunday)?', fromEaster(0)],
  ["(?:chinese|lunar)\\s+new\\s+year'?s?\\s+eve", { kind: 'lunarEnd' }],
  ["(?:chinese|lunar)\\s+new\\s+year'?s?(?:\\s+day)?|spring\\s+festival", lunar(1, 1)],
  ['lantern\\s+festival', lunar(1, 15)],
  ['dragon\\s+boat\\s+festival', lunar(5, 5)],
  ['mid-?\\s?autumn\\s+festival|moon\\s+festival', lunar(8, 15)],
];

/** Chinese names (Simplified and Traditional), longest first when matched. */
export const ZH_HOLIDAYS: Readonly<Record<string, HolidayRule>> = {
  元旦: fixed(1, 1),
  情人节: fixed(2, 14),
  情人節: fixed(2, 14),
  妇女节: fixed(3, 8),
  婦女節: fixed(3, 8),
  三八妇女节: fixed(3, 8),
  三八婦女節: fixed(3, 8),
  植树节: fixed(3, 12),
  植樹節: fixed(3, 12),
  愚人节: fixed(4, 1),
  愚人節: fixed(4, 1),
  劳动节: fixed(5, 1),
  勞動節: fixed(5, 1),
  五一劳动节: fixed(5, 1),
  五一: fixed(5, 1),
  青年节: fixed(5, 4),
  青年節: fixed(5, 4),
  五四青年节: fixed(5, 4),
  儿童节: fixed(6, 1),
  兒童節: fixed(6, 1),
  六一儿童节: fixed(6, 1),
  六一: fixed(6, 1),
  建党节: fixed(7, 1),
  建黨節: fixed(7, 1),
  七一建党节: fixed(7, 1),
  建军节: fixed(8, 1),
  建軍節: fixed(8, 1),
  八一建军节: fixed(8, 1),
  教师节: fixed(9, 10),
  教師節: fixed(9, 10),
  国庆节: fixed(10, 1),
  國慶節: fixed(10, 1),
  国庆: fixed(10, 1),
  國慶: fixed(10, 1),
  十一国庆节: fixed(10, 1),
  万圣节: fixed(10, 31),
  萬聖節: fixed(10, 31),
  光棍节: fixed(11, 11),
  光棍節: fixed(11, 11),
  双十一: fixed(11, 11),
  雙十一: fixed(11, 11),
  双11: fixed(11, 11),
  雙11: fixed(11, 11),
  双十二: fixed(12, 12),
  雙十二: fixed(12, 12),
  双12: fixed(12, 12),
  雙12: fixed(12, 12),
  平安夜: fixed(12, 24),
  圣诞节: fixed(12, 25),
  聖誕節: fixed(12, 25),
  圣诞: fixed(12, 25),
  聖誕: fixed(12, 25),
  母亲节: nth(5, 2, SUN),
  母親節: nth(5, 2, SUN),
  父亲节: nth(6, 3, SUN),
  父親節: nth(6, 3, SUN),
  感恩节: nth(11, 4, THU),
  感恩節: nth(11, 4, THU),
  复活节: fromEaster(0),
  復活節: fromEaster(0),
  春节: lunar(1, 1),
  春節: lunar(1, 1),
  大年初一: lunar(1, 1),
  元宵节: lunar(1, 15),
  元宵節: lunar(1, 15),
  元宵: lunar(1, 15),
  龙抬头: lunar(2, 2),
  龍抬頭: lunar(2, 2),
  端午节: lunar(5, 5),
  端午節: lunar(5, 5),
  端午: lunar(5, 5),
  七夕节: lunar(7, 7),
  七夕節: lunar(7, 7),
  七夕: lunar(7, 7),
  中元节: lunar(7, 15),
  中元節: lunar(7, 15),
  中秋节: lunar(8, 15),
  中秋節: lunar(8, 15),
  中秋: lunar(8, 15),
  重阳节: lunar(9, 9),
  重陽節: lunar(9, 9),
  重阳: lunar(9, 9),
  重陽: lunar(9, 9),
  腊八节: lunar(12, 8),
  臘八節: lunar(12, 8),
  腊八: lunar(12, 8),
  臘八: lunar(12, 8),
  除夕: { kind: 'lunarEnd' },
  大年三十: { kind: 'lunarEnd' },
  清明节: { kind: 'term', term: 'qingming' },
  清明節: { kind: 'term', term: 'qingming' },
  清明: { kind: 'term', term: 'qingming' },
  冬至: { kind: 'term', term: 'dongzhi' },
};
