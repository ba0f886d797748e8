/** Options of the LangGraph checkpointer, checked once at construction with errors naming the field. */
import { ValidationError } from '../core/index.ts';
import type { GraphRetention } from '../store/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

export interface RetentionOptions {
  /**
   * Delete a thread, with all its checkpoints and writes, this long after its last write ("30d",
   * "12h" or milliseconds). Every write moves the expiry forward. Absent: threads are kept until
   * deleted.
   */
  ttl?: Duration;
  /**
   * Keep only the newest N checkpoints of each namespace of a thread; older ones and their writes
   * are deleted in the same transaction as the checkpoint that pushes them out. Time travel reaches
   * back N checkpoints. Absent: every checkpoint is kept.
   */
  keepLatest?: number;
  /**
   * How often the saver deletes expired threads while it writes (only with `ttl`).
   * @default '1m'
   */
  sweepEvery?: Duration;
}

export interface ResolvedRetention {
  retention: GraphRetention;
  sweepEveryMs: number;
}

export function resolveRetention(options: RetentionOptions): ResolvedRetention {
  const retention: GraphRetention = {};
  if (options.ttl !== undefined) {
    const ttlMs = parseDuration(options.ttl, 'ttl');
    if (ttlMs <= 0)
      throw new ValidationError('ttl', 'a positive duration such as "30d"', options.ttl, {
        code: 'INVALID_OPTION',
      });
    retention.ttlMs = ttlMs;
  }
  if (options.keepLatest !== undefined) {
    if (!Number.isInteger(options.keepLatest) || options.keepLatest < 1)
      throw new ValidationError(
        'keepLatest',
        'a whole number of checkpoints, at least 1',
        options.keepLatest,
        {
          code: 'INVALID_OPTION',
        },
      );
    retention.keepLatest = options.keepLatest;
  }
  const sweepEveryMs = parseDuration(options.sweepEvery ?? '1m', 'sweepEvery');
  return { retention, sweepEveryMs };
}
