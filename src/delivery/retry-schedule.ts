import { ValidationError } from '../core/index.ts';

/**
 * How long to wait before the next try of a webhook delivery. Exponential backoff: after failed
 * attempt n (from 1) the wait is `baseMs × factor^(n−1)`, capped at `maxMs`; after `maxAttempts`
 * attempts the answer is `undefined` (give up). With the defaults the waits are 1 s, 2 s, 4 s, …,
 * 64 s, about two minutes in total over eight attempts. A receiver's `retry-after` (`retryAfterMs`)
 * is honoured: the wait is the larger of the two, even above `maxMs`, because the receiver asked.
 *
 * This is a pure function; the durable retry loop (due times in the deliveries table) is the
 * engine's.
 */

export interface WebhookRetryOptions {
  /** Wait after the first failed attempt, ms. @default 1_000 */
  baseMs?: number;
  /** Growth of the wait per attempt (≥ 1). @default 2 */
  factor?: number;
  /** Cap of the computed wait, ms (≥ baseMs). @default 300_000 */
  maxMs?: number;
  /** Attempts in all, the first included; after this many the delivery gives up. @default 8 */
  maxAttempts?: number;
  /**
   * A source of numbers in [0, 1] that spreads retries of many deliveries apart: the wait becomes
   * `wait × (0.5 + 0.5 × jitter())`, between half and all of it. @default none (deterministic)
   */
  jitter?: () => number;
  /** The receiver's `retry-after`, ms; the wait is at least this. @default none */
  retryAfterMs?: number;
}

/** The defaults, for the engine and for documentation. */
export const DEFAULT_WEBHOOK_RETRY = Object.freeze({
  baseMs: 1_000,
  factor: 2,
  maxMs: 300_000,
  maxAttempts: 8,
});

const KNOWN_OPTIONS = new Set(['baseMs', 'factor', 'maxMs', 'maxAttempts', 'jitter', 'retryAfterMs']);

function optionError(field: string, expected: string, received: unknown): ValidationError {
  return new ValidationError(field, expected, received, { code: 'INVALID_OPTION' });
}

function finiteAtLeast(value: unknown, field: string, min: number, expected: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    throw optionError(field, expected, value);
  return value;
}

/** Options with defaults filled in, after validation; errors name `${field}.<option>`. */
export function resolveWebhookRetryOptions(
  options: WebhookRetryOptions = {},
  field = 'retry',
): Required<Omit<WebhookRetryOptions, 'jitter' | 'retryAfterMs'>> &
  Pick<WebhookRetryOptions, 'jitter' | 'retryAfterMs'> {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw optionError(field, 'an object', options);
  for (const key of Object.keys(options))
    if (!KNOWN_OPTIONS.has(key))
      throw optionError(`${field}.${key}`, 'absent (not a retry option)', undefined);
  const o = options;
  const baseMs = finiteAtLeast(
    o.baseMs ?? DEFAULT_WEBHOOK_RETRY.baseMs,
    `${field}.baseMs`,
    0,
    'a non-negative number of milliseconds',
  );
  const factor = finiteAtLeast(
    o.factor ?? DEFAULT_WEBHOOK_RETRY.factor,
    `${field}.factor`,
    1,
    'a number ≥ 1',
  );
  const maxMs = finiteAtLeast(
    o.maxMs ?? Math.max(DEFAULT_WEBHOOK_RETRY.maxMs, baseMs),
    `${field}.maxMs`,
    baseMs,
    `a number of milliseconds ≥ baseMs (${baseMs})`,
  );
  const maxAttempts = o.maxAttempts ?? DEFAULT_WEBHOOK_RETRY.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw optionError(`${field}.maxAttempts`, 'an integer ≥ 1', maxAttempts);
  if (o.jitter !== undefined && typeof o.jitter !== 'function')
    throw optionError(`${field}.jitter`, 'a function returning a number from 0 to 1', o.jitter);
  if (o.retryAfterMs !== undefined)
    finiteAtLeast(o.retryAfterMs, `${field}.retryAfterMs`, 0, 'a non-negative number of milliseconds');
  return {
    baseMs,
    factor,
    maxMs,
    maxAttempts,
    ...(o.jitter ? { jitter: o.jitter } : {}),
    ...(o.retryAfterMs !== undefined ? { retryAfterMs: o.retryAfterMs } : {}),
  };
}

/**
 * The wait before the attempt after failed attempt `attempt` (from 1), or undefined to give up.
 * @example webhookRetryDelay(3) === 4_000
 * @example webhookRetryDelay(1, { retryAfterMs: 30_000 }) === 30_000
 * @example webhookRetryDelay(8) === undefined
 */
export function webhookRetryDelay(attempt: number, options: WebhookRetryOptions = {}): number | undefined {
  const o = resolveWebhookRetryOptions(options, 'options');
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new ValidationError('attempt', 'an integer ≥ 1 (the attempt that just failed)', attempt);
  if (attempt >= o.maxAttempts) return undefined;
  // factor^(attempt−1) overflows to Infinity for large attempts; min() then yields maxMs, as wanted.
  let wait = Math.min(o.maxMs, o.baseMs * o.factor ** (attempt - 1));
  if (o.jitter) {
    const j = o.jitter();
    if (typeof j !== 'number' || !(j >= 0 && j <= 1))
      throw optionError('options.jitter()', 'a number from 0 to 1', j);
    wait *= 0.5 + 0.5 * j;
  }
  return Math.round(Math.max(wait, o.retryAfterMs ?? 0));
}
