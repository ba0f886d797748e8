import { type HolidayRule, ZH_HOLIDAYS } from './holidays.ts';
import type { MomentSpec } from './resolve-moment.ts';
import { parseZhNumber, ZH_NUMBER } from './zh-numbers.ts';
import { LUNAR_MONTHS, MONTH_OFFSET, WEEKDAY_OF, YEAR_OFFSET } from './zh-words.ts';

/**
 * Chinese day expressions beyond plain dates: holidays (国庆节, 2027年春节, 明年中秋), lunar dates
 * (农历八月十五, 正月初一, 腊月廿三, 大年初二), the nth weekday of a month (十月第一个星期一,
 * 下个月最后一个周五), the last day of a month (本月最后一天), a weekday of a named week
 * (下周周六), and a weekday said with a date, which must agree (3月6日星期五).
 */

export type Slot = 'day' | 'daypart' | 'time' | 'weekday' | 'zone';

export interface Part {
  slot: Slot;
  re: RegExp;
  /** Fills `spec` and returns where the part ends, or -1 when the match does not fit. */
  read(m: RegExpExecArray, spec: MomentSpec, text: string): number;
}

export const sticky = (source: string) => new RegExp(source, 'y');
export const end = (m: RegExpExecArray) => m.index + m[0].length;
export const num = (s: string | undefined): number =>
  s === undefined ? Number.NaN : (parseZhNumber(s) ?? Number.NaN);

const byLength = (keys: readonly string[]) => [...keys].sort((a, b) => b.length - a.length).join('|');
const N = ZH_NUMBER;
const WEEK_WORD = '(?:周|週|星期|礼拜|禮拜)';
const WEEKDAY = `${WEEK_WORD}([一二三四五六日天1-7])`;
const RELATIVE = '(下下|下|上|本|这|這)';
export const HOLIDAY_NAMES = byLength(Object.keys(ZH_HOLIDAYS));

/** 2027年 / 27年 / 二〇二七年 → 2027; 明年 → offset 1. */
const YEAR_PREFIX = `(?:(今|明|后|後|去|前)年|(\\d{4}|\\d{2}|[零〇一二三四五六七八九]{4})\\s*年)`;

function yearOf(
  offsetWord: string | undefined,
  written: string | undefined,
): { year?: number; yearOffset?: number } {
  if (offsetWord) return { yearOffset: YEAR_OFFSET[offsetWord] as number };
  if (written) {
    const y = num(written);
    return { year: written.length === 2 ? 2000 + y : y };
  }
  return {};
}

function holiday(spec: MomentSpec, rule: HolidayRule, year: { year?: number; yearOffset?: number }): void {
  spec.day = { kind: 'holiday', rule, ...year };
}

/** 初八 = 8, 十五 = 15, 廿三 = 23, 三十 = 30; null when it is no day of a lunar month. */
function lunarDay(word: string): number | null {
  const d = word.startsWith('初') ? parseZhNumber(word.slice(1)) : parseZhNumber(word);
  return d !== null && d >= 1 && d <= 30 && (!word.startsWith('初') || d <= 10) ? d : null;
}

const LUNAR_PREFIX = '(农历|農曆|阴历|陰曆|旧历|舊曆)';
const LUNAR_MONTH = '(正|冬|腊|臘|十一|十二|[一二三四五六七八九十]|\\d{1,2})月';
const LUNAR_DAY =
  '(初[一二三四五六七八九十]|[二三]十[一二三四五六七八九]?|十[一二三四五六七八九]?|廿[一二三四五六七八九]?|卅|[一二三四五六七八九]|\\d{1,2})';

/** The month of an nth-weekday or month-end expression: 十月, 10月, 下个月, 这个月, 本月. */
const MONTH_SPEC = `(?:${RELATIVE}\\s*(?:个|個)?\\s*月|(${N})\\s*月(?:份)?)`;

function monthOf(
  relative: string | undefined,
  named: string | undefined,
): { month?: number; monthOffset?: number } | null {
  if (relative) return { monthOffset: MONTH_OFFSET[relative] as number };
  const month = num(named);
  return month >= 1 && month <= 12 ? { month } : null;
}

export const ZH_DAY_PARTS: readonly Part[] = [
  {
    // 国庆节, 2027年春节, 明年的中秋节, 除夕夜
    slot: 'day',
    re: sticky(`(?:${YEAR_PREFIX}\\s*的?\\s*)?(${HOLIDAY_NAMES})(夜(?![里裡间間晚]))?`),
    read: (m, spec) => {
      const rule = ZH_HOLIDAYS[m[3] as string];
      if (!rule) return -1;
      holiday(spec, rule, yearOf(m[1], m[2]));
      if (m[4]) spec.daypart = 'night';
      return end(m);
    },
  },
  {
    // 大年初二
    slot: 'day',
    re: sticky('大年(初[一二三四五六七八九十])'),
    read: (m, spec) => {
      const day = lunarDay(m[1] as string);
      if (day === null) return -1;
      holiday(spec, { kind: 'lunar', month: 1, day }, {});
      return end(m);
    },
  },
  {
    // 农历八月十五, 正月十五, 腊月廿三, 农历十二月二十三; 三月十五 without 农历 is March 15th.
    slot: 'day',
    re: sticky(`${LUNAR_PREFIX}?\\s*${LUNAR_MONTH}\\s*${LUNAR_DAY}(?:日|号|號)?`),
    read: (m, spec) => {
      const monthWord = m[2] as string;
      const dayWord = m[3] as string;
      const lunar = m[1] !== undefined || /^[正冬腊臘]$/.test(monthWord) || dayWord.startsWith('初');
      if (!lunar) return -1;
      const month = LUNAR_MONTHS[monthWord] ?? num(monthWord);
      const day = lunarDay(dayWord);
      if (!(month >= 1 && month <= 12) || day === null) return -1;
      holiday(spec, { kind: 'lunar', month, day }, {});
      return end(m);
    },
  },
  {
    // 十月第一个星期一, 下个月的第二个周五, 五月的最后一个星期一
    slot: 'day',
    re: sticky(
      `${MONTH_SPEC}\\s*的?\\s*(?:第\\s*([一二三四五1-5])\\s*(?:个|個)?|(最后|最後)\\s*一?\\s*(?:个|個)?)\\s*${WEEKDAY}`,
    ),
    read: (m, spec) => {
      const month = monthOf(m[1], m[2]);
      if (!month) return -1;
      const n = m[4] ? -1 : num(m[3]);
      spec.day = { kind: 'nthWeekday', n, weekday: WEEKDAY_OF[m[5] as string] as number, ...month };
      return end(m);
    },
  },
  {
    // 本月最后一天, 下个月最后一天
    slot: 'day',
    re: sticky(`${MONTH_SPEC}\\s*的?\\s*(?:最后|最後)\\s*一\\s*天`),
    read: (m, spec) => {
      const month = monthOf(m[1], m[2]);
      if (!month) return -1;
      spec.day = { kind: 'monthEnd', ...month };
      return end(m);
    },
  },
  {
    // 下周周六, 下周的星期六, 下个礼拜的礼拜天
    slot: 'day',
    re: sticky(`${RELATIVE}\\s*(?:个|個)?\\s*${WEEK_WORD}\\s*的?\\s*${WEEKDAY}`),
    read: (m, spec) => {
      const week = { 下下: 2, 下: 1, 上: -1 }[m[1] as string] ?? 0;
      spec.day = { kind: 'weekday', weekday: WEEKDAY_OF[m[2] as string] as number, week };
      return end(m);
    },
  },
  {
    // 6·18, 9-1, 3/20 (month first); not "3-5点", which is a range of hours
    slot: 'day',
    re: sticky('(\\d{1,2})[·\\-/](\\d{1,2})(?![\\d:.·\\-/]|\\s*[点點时時])'),
    read: (m, spec) => {
      const [month, day] = [num(m[1]), num(m[2])];
      if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31)) return -1;
      spec.day = { kind: 'date', month, day };
      return end(m);
    },
  },
  {
    // 3月6日星期五, 2026年3月6日（星期五）: a weekday said with a date must agree with it
    slot: 'weekday',
    re: sticky(`[(（]?\\s*${WEEKDAY}\\s*[)）]?`),
    read: (m, spec) => {
      const kind = spec.day?.kind;
      if (kind !== 'date' && kind !== 'holiday' && kind !== 'offset') return -1;
      spec.weekday = WEEKDAY_OF[m[1] as string] as number;
      return end(m);
    },
  },
  {
    slot: 'zone',
    re: sticky('(北京|中国|中國|上海|香港|台北|臺北)(?:时间|時間)'),
    read: (m, spec) => {
      spec.zone =
        { 香港: 'Asia/Hong_Kong', 台北: 'Asia/Taipei', 臺北: 'Asia/Taipei' }[m[1] as string] ??
        'Asia/Shanghai';
      return end(m);
    },
  },
];

/** The two-digit-year and Chinese-digit-year form of a full date, for the date part's regex. */
export const YEAR_DIGITS = '(\\d{4}|\\d{2}|[零〇一二三四五六七八九]{4})';
