import type { DateTime } from 'luxon';
import { type DurationParts, toLuxon } from './duration-parts.ts';
import { type MomentSpec, resolveMoment } from './resolve-moment.ts';

/** What a grammar read from an expression, before it becomes an instant. */
export type Reading =
  /** "in 2 minutes", "2分钟后", "now": the reference plus an offset ("3 days ago", "5分钟前": minus). */
  | { kind: 'relative'; duration: DurationParts; ago?: boolean }
  /** "tomorrow 9am", "下周一上午10点": a calendar moment. */
  | { kind: 'absolute'; spec: MomentSpec }
  /** "-5 minutes", "in -2 minutes", "-5分钟后": understood, and refused. */
  | { kind: 'rejected'; reason: string };

/**
 * The instant a reading means, in `now`'s zone; `{ error }` when the calendar has no such day, and
 * `{ beyond }` when the arithmetic leaves the calendar ("in 999999 years"), which is past any horizon.
 */
export function resolveReading(
  reading: Exclude<Reading, { kind: 'rejected' }>,
  now: DateTime,
): DateTime | { error: string } | { beyond: true } {
  if (reading.kind === 'relative') {
    const offset = toLuxon(reading.duration);
    const at = reading.ago ? now.minus(offset) : now.plus(offset);
    return at.isValid ? at : { beyond: true };
  }
  return resolveMoment(reading.spec, now);
}

export const NEGATIVE_OFFSET =
  'a delivery time cannot be a negative offset; give a positive one (e.g. "in 5 minutes", "5分钟后")';
