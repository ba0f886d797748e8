/**
 * Protocol 002 section 3.2: the `resolution_failure` record, the error codes and their default
 * strategies, and how a `fallback_config` (the reference's own, else the step's) overrides them.
 */
import type { z } from 'zod';
import { lazySchema } from '../deps/index.ts';
import type { FallbackConfig } from './reference-schema.ts';

export const RefErrorCodes = [
  'REF_NOT_FOUND',
  'REF_TIMEOUT',
  'REF_PERMISSION_DENIED',
  'REF_FORMAT_ERROR',
  'REF_PATH_INVALID',
  'REF_FILTER_ERROR',
] as const;
export type RefErrorCode = (typeof RefErrorCodes)[number];

/**
 * What was finally done about a failure. The first four are `fallback_config` strategies; the last
 * two are the protocol's own defaults for REF_PATH_INVALID ("return the full data") and
 * REF_FILTER_ERROR ("ignore the filter"), which no `fallback_config` can name.
 */
export const AppliedStrategies = [
  'use_default',
  'retry',
  'skip',
  'abort',
  'return_full_data',
  'ignore_filter',
] as const;
export type AppliedStrategy = (typeof AppliedStrategies)[number];

export const resolutionFailureSchema = lazySchema((z) =>
  z.strictObject({
    ref_type: z.string(),
    task_id: z.string().optional(),
    error_code: z.enum(RefErrorCodes),
    error_message: z.string(),
    /** The strategy that ended the resolution (after retries: `skip` or `abort`). */
    fallback_strategy: z.enum(AppliedStrategies),
    /**
     * The default value used (`use_default`), else null. The data used by `return_full_data` and
     * `ignore_filter` is in the resolution result, not copied here: records are stored and logged.
     */
    fallback_value: z.unknown(),
    timestamp: z.iso.datetime(),
    /** Baton addition: attempts made, retries included. */
    attempts: z.int().min(1).optional(),
  }),
);
/** The protocol's `resolution_failure` record (wire format, snake_case). */
export type ResolutionFailure = z.output<typeof resolutionFailureSchema>;

/** A resolved plan for one failure: the strategy and its parameters. */
export interface FallbackPlan {
  strategy: AppliedStrategy;
  defaultValue: unknown;
  retryCount: number;
  retryDelayMs: number;
  onFinalFailure: 'skip' | 'abort';
}

const plan = (strategy: AppliedStrategy, extra: Partial<FallbackPlan> = {}): FallbackPlan =>
  Object.freeze({
    strategy,
    defaultValue: null,
    retryCount: 0,
    retryDelayMs: 0,
    onFinalFailure: 'abort' as const,
    ...extra,
  });

/** Protocol 002 section 3.2, "错误码与处理策略". */
export const DefaultFallbacks: Readonly<Record<RefErrorCode, FallbackPlan>> = Object.freeze({
  // "use the default value or skip": the protocol's own example uses use_default with null.
  REF_NOT_FOUND: plan('use_default'),
  // "retry or degrade": retry with the fallback_config defaults, then drop the reference.
  REF_TIMEOUT: plan('retry', { retryCount: 3, retryDelayMs: 1000, onFinalFailure: 'skip' }),
  REF_PERMISSION_DENIED: plan('abort'),
  // "try conversion, else error": readers convert what they can (encodings, inferred formats)
  // before failing, so what reaches here is the "else error".
  REF_FORMAT_ERROR: plan('abort'),
  REF_PATH_INVALID: plan('return_full_data'),
  REF_FILTER_ERROR: plan('ignore_filter'),
});

/** An explicit config applies to every error code; without one the protocol's table applies. */
export function fallbackPlanFor(code: RefErrorCode, config: FallbackConfig | undefined): FallbackPlan {
  if (!config) return DefaultFallbacks[code];
  return {
    strategy: config.strategy,
    defaultValue: config.default_value ?? null,
    retryCount: config.retry_count,
    retryDelayMs: config.retry_delay_ms,
    onFinalFailure: config.on_final_failure,
  };
}

export function isRefErrorCode(code: unknown): code is RefErrorCode {
  return (RefErrorCodes as readonly unknown[]).includes(code);
}

/**
 * Whether an error is a reference resolution that ended with `abort` (002 §3.2 "报错终止"): the
 * fallback strategy already made its own retries, so the step fails now instead of being retried.
 */
export function isAbortedResolution(error: unknown): boolean {
  const data = (error as { data?: { failure?: { fallback_strategy?: unknown } } } | null)?.data;
  return (
    isRefErrorCode((error as { code?: unknown } | null)?.code) && data?.failure?.fallback_strategy === 'abort'
  );
}
