import type { DurationLikeObject } from 'luxon';

/** A calendar-aware offset ("2 days 3 hours") built by the relative grammars of both languages. */

export const DurationUnits = ['years', 'months', 'weeks', 'days', 'hours', 'minutes', 'seconds'] as const;
export type DurationUnit = (typeof DurationUnits)[number];

export type DurationParts = Partial<Record<DurationUnit | 'milliseconds', number>>;

/** How a fraction of each unit is carried into the next smaller one ("1.5 hours" = 1 h 30 min). */
const SMALLER: Record<DurationUnit, [DurationUnit | 'milliseconds', number]> = {
  years: ['months', 12],
  months: ['days', 30],
  weeks: ['days', 7],
  days: ['hours', 24],
  hours: ['minutes', 60],
  minutes: ['seconds', 60],
  seconds: ['milliseconds', 1000],
};

/** Adds `value` of `unit`, carrying a fractional part into smaller units. */
export function addPart(parts: DurationParts, value: number, unit: DurationUnit | 'milliseconds'): void {
  const whole = Math.floor(value);
  const fraction = value - whole;
  if (whole > 0) parts[unit] = (parts[unit] ?? 0) + whole;
  if (fraction > 1e-9) {
    if (unit === 'milliseconds') {
      parts.milliseconds = (parts.milliseconds ?? 0) + Math.round(fraction);
      return;
    }
    const [next, factor] = SMALLER[unit];
    addPart(parts, Math.round(fraction * factor * 1e6) / 1e6, next);
  }
}

/** True when the offset has no day-or-longer part, so it is exact elapsed time. */
export function isClockDuration(parts: DurationParts): boolean {
  return !parts.years && !parts.months && !parts.weeks && !parts.days;
}

export function isEmptyDuration(parts: DurationParts): boolean {
  return Object.values(parts).every((v) => !v);
}

export function toLuxon(parts: DurationParts): DurationLikeObject {
  return { ...parts };
}
