import type { ModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import { type CompressionOptions, compressConversationHistory } from './compress-history.ts';

/** The checkpoint schema version this code writes (protocol 003). */
export const CHECKPOINT_VERSION = '1.0';

/**
 * One resumable snapshot of an agent loop, exactly the protocol's schema. Field names are the
 * protocol's (already camelCase). `elapsedMs` adds up every invocation so far; `turnCount` and
 * `toolCallCount` are totals across resumes.
 */
export interface CheckpointState {
  /** AI SDK `ModelMessage`s, without the system prompt; compressed when over the threshold. */
  conversationHistory: ModelMessage[];
  turnCount: number;
  toolCallCount: number;
  /** The caller's context metadata, carried unchanged across resumes. */
  contextSummary: Record<string, unknown>;
  /** ISO 8601 instant of the save. */
  checkpointedAt: string;
  elapsedMs: number;
  version: string;
}

export interface CreateCheckpointStateInput {
  conversationHistory: readonly ModelMessage[];
  turnCount: number;
  toolCallCount: number;
  /** @default {} */
  contextSummary?: Record<string, unknown>;
  /** Total time spent on the job so far, all invocations. */
  elapsedMs: number;
  /** Wall time of the save, epoch ms (from the injected clock). */
  now: number;
  /**
   * Compress the history before saving when it is over the threshold; `false` keeps it whole.
   * @default {} (the protocol's 50 / 5 / 20)
   */
  compression?: CompressionOptions | false;
}

/** Captures the processing state as a checkpoint. Throws ValidationError on bad counters or time. */
export function createCheckpointState(input: CreateCheckpointStateInput): CheckpointState {
  if (!Array.isArray(input.conversationHistory))
    throw new ValidationError('conversationHistory', 'an array of messages', input.conversationHistory);
  requireCount('turnCount', input.turnCount);
  requireCount('toolCallCount', input.toolCallCount);
  if (!(Number.isFinite(input.elapsedMs) && input.elapsedMs >= 0))
    throw new ValidationError('elapsedMs', 'a non-negative number of milliseconds', input.elapsedMs);
  if (!Number.isFinite(input.now)) throw new ValidationError('now', 'epoch milliseconds', input.now);
  const history =
    input.compression === false
      ? [...input.conversationHistory]
      : compressConversationHistory(input.conversationHistory, input.compression).messages;
  return {
    conversationHistory: history,
    turnCount: input.turnCount,
    toolCallCount: input.toolCallCount,
    contextSummary: { ...(input.contextSummary ?? {}) },
    checkpointedAt: new Date(input.now).toISOString(),
    elapsedMs: Math.round(input.elapsedMs),
    version: CHECKPOINT_VERSION,
  };
}

function requireCount(field: string, value: unknown): void {
  if (!(Number.isSafeInteger(value) && (value as number) >= 0))
    throw new ValidationError(field, 'a non-negative integer', value);
}
