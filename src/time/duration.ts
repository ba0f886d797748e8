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
 * Converts a duration to milliseconds once, at the edge. Throws a ValidationError naming `field`.
 * @example parseDuration("75m") === 4_500_000
 */
export function parseDuration(value: Duration, field = 'duration'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0)
      throw new ValidationError(field, 'a non-negative number of milliseconds', value, {
        code: 'INVALID_OPTION',
      });
    return value;
  }
  if (typeof value !== 'string')
    throw new ValidationError(field, 'milliseconds or a string like "90s" or "75m"', value, {
      code: 'INVALID_OPTION',
    });
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
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
  if (at < text.length || text.length === 0)
    throw new ValidationError(field, 'milliseconds or a string like "90s", "75m" or "1h30m"', value, {
      code: 'INVALID_OPTION',
    });
  return Math.round(total);
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
