/**
 * Writes how an attempt ended, in one fenced transition: success, a retry after a durable backoff
 * timer, a partial result, or a failure. The retry rules are the protocol's (timeouts ×2 then ×3,
 * waits of 5 s then 15 s by default); a NonRetriableError or a bad input fails at once and a
 * RetryAfterError waits at least as long as it asks.
 */
import {
  BatonError,
  isBatonError,
  type NewEvent,
  newEvent,
  RetryAfterError,
  type SerializedError,
  serializeError,
} from '../core/index.ts';
import type { Fence, RunPatch, RunRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';

export interface AttemptSummary {
  run: RunRecord;
  task: TaskDefinition;
  fence: Fence;
  startedMono: number;
  replayed: string[];
  /** Failed or timed-out attempts before this one. */
  failures: number;
  timeoutMs: number | null;
}

function ttlOf(engine: Engine, s: AttemptSummary): number {
  return s.task.ttlMs ?? (typeof s.run.options.ttlMs === 'number' ? s.run.options.ttlMs : engine.ttlMs);
}

function replayEvents(s: AttemptSummary): NewEvent[] {
  return s.replayed.length > 0
    ? [newEvent(s.run.id, 'step:replayed', { count: s.replayed.length, keys: s.replayed.slice(0, 20) })]
    : [];
}

export async function finishSucceeded(
  engine: Engine,
  s: AttemptSummary,
  output: unknown,
): Promise<RunRecord> {
  const now = engine.clock.now();
  const durationMs = Math.round(engine.clock.monotonic() - s.startedMono);
  try {
    JSON.stringify(output);
  } catch (err) {
    return finishFailed(
      engine,
      s,
      new BatonError(
        'TASK_FAILED',
        `the output of task "${s.task.name}" is not JSON: ${(err as Error).message}`,
      ),
    );
  }
  return engine.store.transition(
    s.run.id,
    {
      status: 'succeeded',
      output: output ?? null,
      error: null,
      finishedAt: now,
      expiresAt: now + ttlOf(engine, s),
    },
    [
      ...replayEvents(s),
      newEvent(s.run.id, 'attempt:succeeded', { attempt: s.run.attempt, durationMs }),
      newEvent(s.run.id, 'run:succeeded', { durationMs: now - (s.run.startedAt ?? s.run.createdAt) }),
    ],
    { fence: s.fence },
  );
}

export async function finishFailed(engine: Engine, s: AttemptSummary, error: unknown): Promise<RunRecord> {
  const now = engine.clock.now();
  const serialized = serializeError(error);
  return engine.store.transition(
    s.run.id,
    {
      status: 'failed',
      error: serialized,
      finishedAt: now,
      expiresAt: now + ttlOf(engine, s),
      meta: { failures: s.failures + 1 },
    },
    [
      ...replayEvents(s),
      newEvent(s.run.id, 'attempt:failed', {
        attempt: s.run.attempt,
        durationMs: Math.round(engine.clock.monotonic() - s.startedMono),
        error: serialized,
      }),
      newEvent(s.run.id, 'run:failed', { error: serialized }),
    ],
    { fence: s.fence },
  );
}

export async function finishPartial(
  engine: Engine,
  s: AttemptSummary,
  output: unknown,
  error: SerializedError,
) {
  const now = engine.clock.now();
  return engine.store.transition(
    s.run.id,
    {
      status: 'partial',
      output,
      error,
      finishedAt: now,
      expiresAt: now + ttlOf(engine, s),
      meta: { failures: s.failures + 1, incomplete: true },
    },
    [
      ...replayEvents(s),
      newEvent(s.run.id, 'run:partial', { durationMs: now - (s.run.startedAt ?? s.run.createdAt) }),
    ],
    { fence: s.fence },
  );
}

/** The wait before the next attempt, or undefined when retries are used up or not allowed. */
export function retryDelay(s: AttemptSummary, error: unknown): number | undefined {
  if (isBatonError(error, 'NON_RETRIABLE') || isBatonError(error, 'INVALID_INPUT')) return undefined;
  const { backoffMs, timeoutMultipliers } = s.task.retry;
  if (s.failures >= timeoutMultipliers.length) return undefined;
  const wait = backoffMs[s.failures] ?? 0;
  return error instanceof RetryAfterError ? Math.max(wait, error.retryAfterMs) : wait;
}

export function timeoutFor(task: TaskDefinition, failures: number): number | null {
  if (task.timeoutMs === null) return null;
  const multiplier = failures === 0 ? 1 : (task.retry.timeoutMultipliers[failures - 1] ?? 1);
  return Math.round(task.timeoutMs * multiplier);
}

export async function scheduleRetry(
  engine: Engine,
  s: AttemptSummary,
  waitMs: number,
  attemptEvent: NewEvent,
  extraMeta: Record<string, unknown> = {},
): Promise<RunRecord> {
  const wakeAt = engine.clock.now() + waitMs;
  const patch: RunPatch = {
    status: 'waiting',
    waitReason: 'timer',
    wakeAt,
    meta: { failures: s.failures + 1, ...extraMeta },
  };
  return engine.store.transition(
    s.run.id,
    patch,
    [
      ...replayEvents(s),
      attemptEvent,
      newEvent(s.run.id, 'attempt:retrying', {
        attempt: s.run.attempt,
        nextAttempt: s.run.attempt + 1,
        waitMs,
        nextTimeoutMs: timeoutFor(s.task, s.failures + 1),
      }),
      newEvent(s.run.id, 'run:waiting', { reason: 'timer', wakeAt: new Date(wakeAt).toISOString() }),
    ],
    { fence: s.fence },
  );
}
