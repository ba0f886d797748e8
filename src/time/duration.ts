import { ValidationError } from '../core/errors.ts';

/** A duration as users write it: milliseconds, or a string like "90s", "75m", "1h30m", "500ms". */
export type Duration = number | string;

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  sec: 1_000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)\s*(ms|sec|min|s|m|h|d)/gy;

/**
 * The longest duration Baton accepts: 100 years. Every stored time is `now + duration` in epoch
 * milliseconds, which must stay an exact integer (and a SQLite INTEGER); anything longer is a typo.
 */
export const MAX_DURATION_MS = 100 * 365.25 * 86_400_000;

const EXPECTED = `a whole number of milliseconds from 0 to ${MAX_DURATION_MS} (100 years), or a string like "90s", "75m" or "1h30m"`;

/**
 * Converts a duration to whole milliseconds once, at the edge. Throws a ValidationError naming
 * `field` for anything else: a negative, fractional or non-finite number, a duration over 100
 * years, or text that is not a duration.
 * @example parseDuration("75m") === 4_500_000
 */
export function parseDuration(value: Duration, field = 'duration'): number {
  const refuse = () => new ValidationError(field, EXPECTED, value, { code: 'INVALID_OPTION' });
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0 || value > MAX_DURATION_MS) throw refuse();
    return value;
  }
  if (typeof value !== 'string' || value.length > 200) throw refuse();
  const text = value.trim().toLowerCase();
  if (/^\d+$/.test(text)) return parseDuration(Number(text), field);
  let total = 0;
  let at = 0;
  PART.lastIndex = 0;
  for (;;) {
    while (text[at] === ' ') at++;
    if (at >= text.length) break;
    PART.lastIndex = at;
    const m = PART.exec(text);
    if (!m) break;
    total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
    at = PART.lastIndex;
  }
  if (at < text.length || text.length === 0) throw refuse();
  const ms = Math.round(total);
  if (!Number.isSafeInteger(ms) || ms > MAX_DURATION_MS) throw refuse();
  return ms;
}

/** "4500000" → "75m", for messages and the CLI. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  if (rest < 1_000) return `${sign}${rest}ms`;
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  const s = rest / 1_000;
  if (s > 0) parts.push(`${Number.isInteger(s) ? s : s.toFixed(1)}s`);
  return sign + parts.join('');
}
