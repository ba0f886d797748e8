import { ValidationError } from '../core/index.ts';

/** Durations for people: "2 minutes", "1 hour 30 minutes", "2分钟", "1小时30分钟". */

const UNITS = [
  { ms: 86_400_000, en: ['day', 'days'], zh: '天' },
  { ms: 3_600_000, en: ['hour', 'hours'], zh: '小时' },
  { ms: 60_000, en: ['minute', 'minutes'], zh: '分钟' },
  { ms: 1_000, en: ['second', 'seconds'], zh: '秒' },
] as const;

type Unit = (typeof UNITS)[number];

function say(n: number, unit: Unit, language: 'en' | 'zh'): string {
  return language === 'zh' ? `${n}${unit.zh}` : `${n} ${unit.en[n === 1 ? 0 : 1]}`;
}

/**
 * At most two units, the smaller one rounded: 90_000 → "1 minute 30 seconds", 7_200_000 → "2小时".
 * Under a second reads "less than a second" / "不到1秒".
 */
export function humanizeDuration(ms: number, language: 'en' | 'zh' = 'en'): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    throw new ValidationError('ms', 'a non-negative number of milliseconds', ms);
  if (language !== 'en' && language !== 'zh') throw new ValidationError('language', '"en" or "zh"', language);
  if (ms < 1000) return language === 'zh' ? '不到1秒' : 'less than a second';
  const major = (v: number) => UNITS.findIndex((u) => v >= u.ms);
  let i = major(ms);
  const step = (UNITS[i + 1] ?? UNITS[i]) as Unit;
  const rounded = Math.round(ms / step.ms) * step.ms;
  i = major(rounded);
  const big = UNITS[i] as Unit;
  const small = UNITS[i + 1];
  const count = Math.floor(rounded / big.ms);
  const rest = small ? Math.round((rounded - count * big.ms) / small.ms) : 0;
  const parts = [say(count, big, language)];
  if (small && rest > 0) parts.push(say(rest, small, language));
  return parts.join(language === 'zh' ? '' : ' ');
}
