import type { CallSettings, generateText, LanguageModel, ModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import type { Clock } from '../time/index.ts';
import type { AgentEventWithTime, CheckpointReason } from './agent-events.ts';
import type { AgentTool } from './agent-tools.ts';
import type { CheckpointState } from './checkpoint-state.ts';
import { type CompressionOptions, resolveCompressionOptions } from './compress-history.ts';

export interface AgentLoopInitResult {
  /** Appended to the starting history (e.g. collected context). */
  messages?: ModelMessage[];
  /** Merged into `contextSummary`, which every checkpoint carries. */
  contextSummary?: Record<string, unknown>;
}

export interface AgentLoopOptions {
  /** Any AI SDK language model (a provider's, `createScriptedModel(...)`, or a mock). */
  model: LanguageModel;
  /** Sent on every call; not stored in checkpoints, so pass it again on resume. */
  system?: string;
  /** The user's request, for a fresh start. Give `prompt` or `messages`, not both. */
  prompt?: string;
  /** The starting conversation, for a fresh start. */
  messages?: ModelMessage[];
  /** @default {} */
  tools?: Record<string, AgentTool>;
  /** All time goes through it: deadlines, elapsed time, `checkpointedAt`. */
  clock: Clock;
  /** This invocation's limit in ms. @default 60_000 */
  timeoutMs?: number;
  /** Checkpoint and stop when less than this is left (55 s of 60 s). @default 5_000 */
  checkpointBeforeDeadlineMs?: number;
  /** Save a periodic checkpoint after every N-th turn (counted over the whole job); 0 turns it off. @default 5 */
  checkpointEveryTurns?: number;
  /** Stop with `stopReason: 'max_turns'` once the job (all invocations) has made this many turns. @default unlimited */
  maxTurns?: number;
  /** History compression before each save; `false` saves the history whole. @default {} (50 / 5 / 20) */
  compression?: CompressionOptions | false;
  /**
   * The checkpoint to continue from, as stored (object or JSON string). It is validated here:
   * when unusable, the loop emits `checkpoint:rejected`, sets `checkpointRejected` on the result
   * and starts fresh from `prompt` / `messages` (so pass those too). `null` means "none".
   */
  resumeFrom?: CheckpointState | unknown;
  /** Context metadata for a fresh start; restored from the checkpoint on resume. @default {} */
  contextSummary?: Record<string, unknown>;
  /** One-time setup on a fresh start (context collection); skipped on resume. */
  initialize?: (context: { signal: AbortSignal }) => Promise<AgentLoopInitResult | undefined>;
  /** Stores a checkpoint. Calls never overlap and arrive in order; a rejection stops the loop. */
  onCheckpoint: (state: CheckpointState, reason: CheckpointReason) => Promise<void>;
  /** Observer for the event log; what it throws is ignored so that it cannot break the loop. */
  onEvent?: (event: AgentEventWithTime) => void;
  /** Cancels the loop: in-flight work is aborted and the loop throws `AgentLoopError('CANCELLED')`. */
  signal?: AbortSignal;
  /** When this invocation began on `clock.monotonic()`, if earlier than the call. @default clock.monotonic() */
  invocationStartedAt?: number;
  /**
   * Retries of a failed model call inside `generateText`. Off by default: the SDK waits between
   * retries on real timers that the injected clock and the deadline do not see; retry at the
   * attempt level instead, from the last checkpoint. @default 0
   */
  maxRetries?: number;
  /** Model settings passed to every call (temperature, maxOutputTokens, ...). */
  callSettings?: Omit<CallSettings, 'abortSignal' | 'maxRetries' | 'timeout'>;
  providerOptions?: Parameters<typeof generateText>[0]['providerOptions'];
}

export interface ResolvedLoopOptions {
  timeoutMs: number;
  checkpointBeforeDeadlineMs: number;
  checkpointEveryTurns: number;
  maxTurns: number;
  compression: Required<CompressionOptions> | false;
  maxRetries: number;
}

/** Validates the options once, at the edge; every error names the field. */
export function resolveLoopOptions(options: AgentLoopOptions): ResolvedLoopOptions {
  const bad = (field: string, expected: string, value: unknown) =>
    new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
  if (typeof options !== 'object' || options === null) throw bad('options', 'an object', options);
  if (options.model === undefined || options.model === null)
    throw bad('model', 'a language model', options.model);
  const clock = options.clock as Partial<Clock> | undefined;
  if (typeof clock?.monotonic !== 'function' || typeof clock.setTimer !== 'function')
    throw bad('clock', 'a Clock', options.clock);
  if (typeof options.onCheckpoint !== 'function')
    throw bad('onCheckpoint', 'a function', options.onCheckpoint);
  const timeoutMs = options.timeoutMs ?? 60_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw bad('timeoutMs', 'a positive number of ms', timeoutMs);
  const before = options.checkpointBeforeDeadlineMs ?? 5_000;
  if (!(Number.isFinite(before) && before >= 0 && before < timeoutMs))
    throw bad('checkpointBeforeDeadlineMs', `a number of ms ≥ 0 and below timeoutMs (${timeoutMs})`, before);
  const every = options.checkpointEveryTurns ?? 5;
  if (!(Number.isSafeInteger(every) && every >= 0))
    throw bad('checkpointEveryTurns', 'a non-negative integer', every);
  const maxTurns = options.maxTurns ?? Number.POSITIVE_INFINITY;
  if (!(maxTurns === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxTurns) && maxTurns >= 1)))
    throw bad('maxTurns', 'a positive integer', maxTurns);
  const startedAt = options.invocationStartedAt;
  if (startedAt !== undefined && !(Number.isFinite(startedAt) && startedAt <= options.clock.monotonic()))
    throw bad('invocationStartedAt', 'a clock.monotonic() time no later than now', startedAt);
  const maxRetries = options.maxRetries ?? 0;
  if (!(Number.isSafeInteger(maxRetries) && maxRetries >= 0))
    throw bad('maxRetries', 'a non-negative integer', maxRetries);
  if (options.prompt !== undefined && typeof options.prompt !== 'string')
    throw bad('prompt', 'a string', options.prompt);
  if (options.messages !== undefined && !Array.isArray(options.messages))
    throw bad('messages', 'an array of messages', options.messages);
  if (options.prompt !== undefined && options.messages !== undefined)
    throw bad('prompt', 'not given together with messages', options.prompt);
  for (const [name, t] of Object.entries(options.tools ?? {})) {
    if (typeof t?.execute !== 'function') throw bad(`tools.${name}.execute`, 'a function', t?.execute);
    if (typeof t.inputSchema !== 'object' && typeof t.inputSchema !== 'function')
      throw bad(`tools.${name}.inputSchema`, 'a zod or JSON schema', t.inputSchema);
  }
  const compression =
    options.compression === false ? false : resolveCompressionOptions(options.compression, 'compression');
  return {
    timeoutMs,
    checkpointBeforeDeadlineMs: before,
    checkpointEveryTurns: every,
    maxTurns,
    compression,
    maxRetries,
  };
}
