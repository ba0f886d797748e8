import { ValidationError } from '../errors.ts';
import { lookupMode, positiveMs, resolveTimeouts, type TimeoutTableOptions } from './mode-timeouts.ts';

/**
 * Retries with growing timeouts and backoff (protocol 001, "Retry Logic"), compiled once from
 * options whose errors name the field.
 *
 * Attempts are numbered from 1. Attempt 1 runs under the base timeout, retry k (attempt k + 1)
 * under base × timeoutMultipliers[k − 1] after waiting backoffMs[k − 1]; past the end of either list
 * the last entry repeats. After `maxRetries` retries the next step is to escalate. Defaults: ×2 then
 * ×3, waits 5 s then 15 s, two retries. Every attempt timeout is capped at the per-agent timeout.
 *
 * Fast mode (`--fast-mode`): timeouts halved, one retry, waits 2 s then 5 s (the 5 s only matters
 * if `maxRetries` is raised), and partial results are accepted more readily: with `acceptPartial`
 * an attempt that ended with at least one finding is not retried but escalated at once, where the
 * unattended default policy continues with the partial results. Explicit options win over both.
 */

export const FAST_MODE_WARNING =
  'Fast mode: Research timeouts reduced by 50%\nResearch quality may be lower. For thorough research, omit --fast-mode.';

/** The protocol's warning; the percentage follows a non-default factor. */
export function fastModeWarning(factor = 0.5): string {
  return FAST_MODE_WARNING.replace('50%', `${Math.round((1 - factor) * 100)}%`);
}

export interface RetryOptions extends TimeoutTableOptions {
  /** The research mode whose timeout is the base (a key of RESEARCH_MODES or `modes`). */
  mode?: string;
  /** Base timeout of attempt 1, instead of the mode's. Halved in fast mode like the mode timeouts. @default the mode's timeout, else the per-agent timeout */
  timeoutMs?: number;
  /** Multiplier of the base timeout for retry 1, 2, … (each ≥ 1). @default [2, 3] */
  timeoutMultipliers?: readonly number[];
  /** Wait before retry 1, 2, … in ms. @default [5000, 15000]; fast mode [2000, 5000] */
  backoffMs?: readonly number[];
  /** @default 2; fast mode 1 */
  maxRetries?: number;
  /** Escalate instead of retrying when the attempt left partial findings. @default false; fast mode true */
  acceptPartial?: boolean;
}

const KNOWN_OPTIONS = new Set([
  'mode',
  'timeoutMs',
  'timeoutMultipliers',
  'backoffMs',
  'maxRetries',
  'acceptPartial',
  'modes',
  'agentTimeoutMs',
  'fastTimeoutFactor',
]);

export const DEFAULT_RETRY = Object.freeze({
  timeoutMultipliers: Object.freeze([2, 3]),
  backoffMs: Object.freeze([5_000, 15_000]),
  maxRetries: 2,
  acceptPartial: false,
});

export const FAST_RETRY = Object.freeze({
  timeoutMultipliers: Object.freeze([2, 3]),
  backoffMs: Object.freeze([2_000, 5_000]),
  maxRetries: 1,
  acceptPartial: true,
});

export interface NextStepInput {
  /** The attempt that just ended, from 1. */
  attempt: number;
  /** What it ended with: NON_RETRIABLE fails now, RETRY_AFTER sets a minimum wait. */
  error: unknown;
  /** Findings captured before it ended (e.g. the timeout result). */
  partial?: { readonly findings: readonly unknown[] };
  /** Time the agent has spent so far on all attempts and waits; enables the per-agent cap. */
  elapsedMs?: number;
}

export const EscalationReasons = ['retries_exhausted', 'partial_accepted', 'agent_timeout'] as const;
export type EscalationReason = (typeof EscalationReasons)[number];

export type NextStep =
  | { kind: 'retry'; attempt: number; waitMs: number; timeoutMs: number }
  /** `menu`: which protocol menu the decision request should show (see buildDecisionRequest). */
  | { kind: 'escalate'; reason: EscalationReason; menu: 'timeout' | 'exhausted' }
  | { kind: 'fail'; reason: 'non_retriable' };

export interface RetryPolicy {
  readonly fast: boolean;
  readonly mode: string | undefined;
  readonly modeLabel: string | undefined;
  /** Every mode a "different mode" answer may name. */
  readonly modeIds: readonly string[];
  readonly baseTimeoutMs: number;
  readonly agentTimeoutMs: number;
  readonly timeoutMultipliers: readonly number[];
  readonly backoffScheduleMs: readonly number[];
  readonly maxRetries: number;
  readonly maxAttempts: number;
  readonly acceptPartial: boolean;
  /** The fast-mode warning to show, or undefined in normal mode. */
  readonly warning: string | undefined;
  /** Timeout of attempt `attempt` (from 1), capped at the per-agent timeout. */
  attemptTimeoutMs(attempt: number): number;
  /** Wait before retry `retryIndex` (from 1). */
  backoffMs(retryIndex: number): number;
  nextStep(input: NextStepInput): NextStep;
}

function optionError(field: string, expected: string, received: unknown): ValidationError {
  return new ValidationError(field, expected, received, { code: 'INVALID_OPTION' });
}

function numberList(value: unknown, field: string, min: number, expected: string): readonly number[] {
  if (!Array.isArray(value) || value.length === 0)
    throw optionError(field, `a non-empty array of numbers ${expected}`, value);
  return Object.freeze(
    value.map((n: unknown, i) => {
      if (typeof n !== 'number' || !Number.isFinite(n))
        throw optionError(`${field}[${i}]`, `a number ${expected}`, n);
      if (n < min) throw optionError(`${field}[${i}]`, expected, n);
      return n;
    }),
  );
}

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

function retryAfterOf(error: unknown): number {
  if (codeOf(error) !== 'RETRY_AFTER') return 0;
  const e = error as { retryAfterMs?: unknown; data?: { retryAfterMs?: unknown } };
  const ms = Number(e.retryAfterMs ?? e.data?.retryAfterMs);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

function positiveInteger(value: unknown, field: string): number {
  if (!Number.isInteger(value) || (value as number) < 1)
    throw new ValidationError(field, 'an integer ≥ 1', value);
  return value as number;
}

/**
 * Validates options once and returns the policy the engine asks on every attempt.
 * @example compileRetryPolicy({ mode: 'external' }).attemptTimeoutMs(2) === 240_000
 */
export function compileRetryPolicy(
  options: RetryOptions = {},
  { fast = false, field = 'retry' }: { fast?: boolean; field?: string } = {},
): RetryPolicy {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw optionError(field, 'an object', options);
  for (const key of Object.keys(options))
    if (!KNOWN_OPTIONS.has(key))
      throw optionError(`${field}.${key}`, `a known option (${[...KNOWN_OPTIONS].join(', ')})`, key);
  const defaults = fast ? FAST_RETRY : DEFAULT_RETRY;
  const table = resolveTimeouts(options, fast, field);
  const mode = options.mode === undefined ? undefined : lookupMode(table, options.mode, `${field}.mode`);
  const baseTimeoutMs = Math.min(
    options.timeoutMs !== undefined
      ? positiveMs(options.timeoutMs, `${field}.timeoutMs`) * (fast ? table.fastTimeoutFactor : 1)
      : (mode?.timeoutMs ?? table.agentTimeoutMs),
    table.agentTimeoutMs,
  );
  const timeoutMultipliers = numberList(
    options.timeoutMultipliers ?? defaults.timeoutMultipliers,
    `${field}.timeoutMultipliers`,
    1,
    '≥ 1',
  );
  const backoffScheduleMs = numberList(
    options.backoffMs ?? defaults.backoffMs,
    `${field}.backoffMs`,
    0,
    '≥ 0',
  );
  const maxRetries = options.maxRetries ?? defaults.maxRetries;
  if (!Number.isInteger(maxRetries) || maxRetries < 0)
    throw optionError(`${field}.maxRetries`, 'an integer ≥ 0', maxRetries);
  const acceptPartial = options.acceptPartial ?? defaults.acceptPartial;
  if (typeof acceptPartial !== 'boolean')
    throw optionError(`${field}.acceptPartial`, 'a boolean', acceptPartial);

  const pick = (list: readonly number[], k: number) => list[Math.min(k, list.length) - 1] as number;
  const attemptTimeoutMs = (attempt: number): number => {
    positiveInteger(attempt, 'attempt');
    const ms = attempt === 1 ? baseTimeoutMs : baseTimeoutMs * pick(timeoutMultipliers, attempt - 1);
    return Math.min(ms, table.agentTimeoutMs);
  };
  const backoffMs = (retryIndex: number): number =>
    pick(backoffScheduleMs, positiveInteger(retryIndex, 'retryIndex'));

  return Object.freeze({
    fast,
    mode: options.mode,
    modeLabel: mode?.label,
    modeIds: Object.freeze(Object.keys(table.modes)),
    baseTimeoutMs,
    agentTimeoutMs: table.agentTimeoutMs,
    timeoutMultipliers,
    backoffScheduleMs,
    maxRetries,
    maxAttempts: maxRetries + 1,
    acceptPartial,
    warning: fast ? fastModeWarning(table.fastTimeoutFactor) : undefined,
    attemptTimeoutMs,
    backoffMs,
    nextStep({ attempt, error, partial, elapsedMs }: NextStepInput): NextStep {
      positiveInteger(attempt, 'attempt');
      if (codeOf(error) === 'NON_RETRIABLE') return { kind: 'fail', reason: 'non_retriable' };
      if (acceptPartial && partial !== undefined && partial.findings.length > 0)
        return { kind: 'escalate', reason: 'partial_accepted', menu: 'timeout' };
      if (attempt > maxRetries) return { kind: 'escalate', reason: 'retries_exhausted', menu: 'exhausted' };
      const waitMs = Math.max(backoffMs(attempt), retryAfterOf(error));
      let timeoutMs = attemptTimeoutMs(attempt + 1);
      if (elapsedMs !== undefined) {
        // A retry shorter than the first attempt's timeout is not worth making.
        const left = table.agentTimeoutMs - elapsedMs - waitMs;
        if (left < baseTimeoutMs) return { kind: 'escalate', reason: 'agent_timeout', menu: 'exhausted' };
        timeoutMs = Math.min(timeoutMs, left);
      }
      return { kind: 'retry', attempt: attempt + 1, waitMs, timeoutMs };
    },
  });
}
