import type { ModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import type { CheckpointState } from './checkpoint-state.ts';

/*
 * How to continue from a checkpoint: counters go on from the saved totals (8 turns saved + 10 new
 * = 18; 12 tool calls + 13 = 25), the history is restored, initialization is skipped, and this
 * invocation gets its own budget. The budget is computed from the recorded start of this
 * invocation, not from process uptime, so time spent loading the checkpoint is already spent.
 */

export interface PlanResumeOptions {
  /** This invocation's limit in ms (the protocol's 60 000). */
  timeoutMs: number;
  /** Now, on the same clock as `invocationStartedAt` (monotonic in the loop). */
  now: number;
  /** When this invocation began. @default now */
  invocationStartedAt?: number;
}

export interface ResumePlan {
  wasResumed: true;
  /** The turn number the loop runs next. */
  nextTurn: number;
  turnCount: number;
  toolCallCount: number;
  conversationHistory: ModelMessage[];
  contextSummary: Record<string, unknown>;
  /** Time the job had already spent in earlier invocations. */
  priorElapsedMs: number;
  /** Budget left for this invocation; 0 when already spent. */
  remainingMs: number;
  /** When this invocation's budget ends, on the clock of `now`. */
  deadline: number;
}

export function planResume(state: CheckpointState, options: PlanResumeOptions): ResumePlan {
  const { timeoutMs, now } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new ValidationError('timeoutMs', 'a positive number of milliseconds', timeoutMs, {
      code: 'INVALID_OPTION',
    });
  if (!Number.isFinite(now))
    throw new ValidationError('now', 'a finite time in ms', now, { code: 'INVALID_OPTION' });
  const startedAt = options.invocationStartedAt ?? now;
  if (!(Number.isFinite(startedAt) && startedAt <= now))
    throw new ValidationError('invocationStartedAt', `a time at or before now (${now})`, startedAt, {
      code: 'INVALID_OPTION',
    });
  const deadline = startedAt + timeoutMs;
  return {
    wasResumed: true,
    nextTurn: state.turnCount + 1,
    turnCount: state.turnCount,
    toolCallCount: state.toolCallCount,
    conversationHistory: [...state.conversationHistory],
    contextSummary: { ...state.contextSummary },
    priorElapsedMs: state.elapsedMs,
    remainingMs: Math.max(0, deadline - now),
    deadline,
  };
}
