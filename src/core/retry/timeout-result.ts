import { lazySchema } from '../../deps/index.ts';
import { formatIsoSeconds } from '../budget/index.ts';
import { ValidationError } from '../errors.ts';

/**
 * The partial result an attempt returns when its timeout ends it (protocol 001, "Step 1: Capture
 * Partial Results"): whatever was found so far, in the protocol's snake_case wire format.
 */

export interface TimeoutResult<F = unknown> {
  status: 'timeout';
  partial: true;
  findings: F[];
  /** Whether the search had already run out of places to look (then a retry finds nothing new). */
  search_exhausted: boolean;
  timed_out_at: string;
  timeout_duration_seconds: number;
}

export interface TimeoutResultInput<F> {
  findings: readonly F[];
  /** @default false */
  searchExhausted?: boolean;
  /** When the timeout fired, epoch ms. */
  timedOutAtMs: number;
  /** The timeout that fired; 0 when the run's budget was spent before the attempt could start. */
  timeoutMs: number;
}

export function timeoutResult<F>(input: TimeoutResultInput<F>): TimeoutResult<F> {
  if (!Array.isArray(input.findings)) throw new ValidationError('findings', 'an array', input.findings);
  const searchExhausted = input.searchExhausted ?? false;
  if (typeof searchExhausted !== 'boolean')
    throw new ValidationError('searchExhausted', 'a boolean', searchExhausted);
  return {
    status: 'timeout',
    partial: true,
    findings: [...input.findings],
    search_exhausted: searchExhausted,
    timed_out_at: formatIsoSeconds(input.timedOutAtMs, 'timedOutAtMs'),
    timeout_duration_seconds: nonNegativeMs(input.timeoutMs) / 1000,
  };
}

/** An attempt with no time left (budget 0, or resumed after its budget ended) timed out after 0 ms. */
function nonNegativeMs(value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value))
    throw new ValidationError('timeoutMs', 'a number of milliseconds ≥ 0', value, { code: 'INVALID_OPTION' });
  return value;
}

export const timeoutResultSchema = lazySchema((z) =>
  z.object({
    status: z.literal('timeout'),
    partial: z.literal(true),
    findings: z.array(z.unknown()),
    search_exhausted: z.boolean(),
    timed_out_at: z.iso.datetime({ offset: true, local: true }),
    timeout_duration_seconds: z.number().nonnegative(),
  }),
);
