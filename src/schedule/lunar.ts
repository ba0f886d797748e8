import { createRequire } from 'node:module';

/**
 * The Chinese calendar, through lunar-javascript (6tail). Node's own ICU "chinese" calendar was
 * measured and rejected: it puts 春节 2027 on Feb 7 where the published calendar says Feb 6.
 * The library takes ~150 ms to load, so it is required on first use only: `import 'baton'` and
 * expressions without a lunar date never pay for it.
 */

export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

interface SolarDay {
  getYear(): number;
  getMonth(): number;
  getDay(): number;
}
interface LunarDay {
  getSolar(): SolarDay;
  getJieQiTable(): Record<string, SolarDay>;
}
interface LunarModule {
  Lunar: { fromYmd(year: number, month: number, day: number): LunarDay };
  Solar: { fromYmd(year: number, month: number, day: number): { getLunar(): { getYear(): number } } };
}

let lib: LunarModule | undefined;

function load(): LunarModule {
  lib ??= createRequire(import.meta.url)('lunar-javascript') as LunarModule;
  return lib;
}

const civil = (s: SolarDay): CivilDate => ({ year: s.getYear(), month: s.getMonth(), day: s.getDay() });

/** The Gregorian date of lunar `month`/`day` in lunar `year`; null when that day does not exist. */
export function lunarToSolar(year: number, month: number, day: number): CivilDate | null {
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 30)) return null;
  try {
    return civil(load().Lunar.fromYmd(year, month, day).getSolar());
  } catch {
    // lunar-javascript throws for a 30th in a 29-day month and for years out of its range.
    return null;
  }
}

/** 除夕: the last day of lunar `year` (the eve of the next 春节), whether 腊月 has 29 or 30 days. */
export function lunarYearEnd(year: number): CivilDate | null {
  const next = lunarToSolar(year + 1, 1, 1);
  if (!next) return null;
  const d = new Date(Date.UTC(next.year, next.month - 1, next.day - 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The lunar year that a Gregorian date falls in (2026-01-20 is still lunar 2025). */
export function lunarYearOf(date: CivilDate): number {
  return load().Solar.fromYmd(date.year, date.month, date.day).getLunar().getYear();
}

/** The two solar terms Baton reads as days: 清明 and 冬至. */
export type SolarTerm = 'qingming' | 'dongzhi';
const TERM_KEYS: Record<SolarTerm, readonly string[]> = {
  qingming: ['清明', 'QING_MING'],
  dongzhi: ['冬至', 'DONG_ZHI'],
};

/** The day of solar term `term` in Gregorian `year`. */
export function solarTermDay(term: SolarTerm, year: number): CivilDate | null {
  // A lunar year's table holds the terms around it; the one we want is in one of these two.
  for (const lunarYear of [year, year + 1]) {
    const table = load().Lunar.fromYmd(lunarYear, 1, 1).getJieQiTable();
    for (const key of TERM_KEYS[term]) {
      const day = table[key];
      if (day && day.getYear() === year) return civil(day);
    }
  }
  return null;
}
