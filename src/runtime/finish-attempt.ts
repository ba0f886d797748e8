/**
 * Writes how an attempt ended, in one fenced transition. Success finishes the run. A failure or a
 * timeout asks the compiled retry policy (protocol 001: timeouts ×2 then ×3, waits of 5 s then 15 s)
 * whether to retry after a durable backoff timer, fail at once (NonRetriableError, bad input), or
 * escalate with a decision request — see decisions.ts.
 */
import {
  type AttemptLogEntry,
  assertJsonValue,
  type BatonError,
  isBatonError,
  type NewEvent,
  newEvent,
  type RetryPolicy,
  serializeError,
  type TimeoutResult,
  timeoutResult,
} from '../core/index.ts';
import { isAbortedResolution } from '../refs/index.ts';
import type { Fence, RunRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import type { RunMeta } from './run-meta.ts';
import { type RunOptions, runOptionsOf } from './run-options.ts';
import { deliversToolResult, logFinishedEarly, resultDelivery } from './scheduled-delivery.ts';

export interface AttemptSummary {
  run: RunRecord;
  /** The run's options and meta, decoded once for the whole attempt (the run's row does not change under it). */
  options: RunOptions;
  meta: RunMeta;
  task: TaskDefinition;
  fence: Fence;
  policy: RetryPolicy;
  mode: string | undefined;
  startedMono: number;
  replayed: readonly string[];
  /** Failed or timed-out attempts before this one (since the last reset). */
  failures: number;
  timeoutMs: number;
  /** This attempt started from a checkpoint that passed validation (not fresh). */
  resumedFromCheckpoint: boolean;
}

export function ttlOf(
  engine: Engine,
  run: RunRecord,
  task: TaskDefinition | undefined,
  options?: RunOptions,
): number {
  return task?.ttlMs ?? (options ?? runOptionsOf(run)).ttlMs ?? engine.ttlMs;
}

export function replayEvents(s: AttemptSummary): NewEvent[] {
  return s.replayed.length > 0
    ? [newEvent(s.run.id, 'step:replayed', { count: s.replayed.length, keys: s.replayed.slice(0, 20) })]
    : [];
}

/**
 * The run's attempt log with this attempt appended (the flow's tracked timeout state reads it).
 * `agent`: the step is one of protocol 001's agents, which the tracked state counts — it runs under
 * a research mode or an agent profile, or is a task the flow spawns without dependencies. A tool is
 * never one, nor is a plain task that waits for other steps (the aggregator).
 */
export function attemptLog(
  s: AttemptSummary,
  timedOut: boolean,
): { attemptsLog: AttemptLogEntry[]; mode: string; agent: boolean } {
  return {
    attemptsLog: [...s.meta.attemptsLog, { attempt: s.run.attempt, timeoutMs: s.timeoutMs, timedOut }],
    mode: s.mode ?? s.task.name,
    agent:
      !deliversToolResult(s.run, s.options) &&
      (s.mode !== undefined || s.task.agent !== undefined || s.run.dependsOn.length === 0),
  };
}

export async function finishSucceeded(
  engine: Engine,
  s: AttemptSummary,
  output: unknown,
): Promise<RunRecord> {
  const now = engine.clock.now();
  const durationMs = Math.round(engine.clock.monotonic() - s.startedMono);
  try {
    // Refused rather than stored changed (NaN, ±Infinity and array holes would come back as null).
    assertJsonValue(output ?? null, `the output of task "${s.task.name}"`, 'NON_RETRIABLE');
  } catch (err) {
    return finishFailed(engine, s, err as BatonError);
  }
  const schedule = s.options.schedule;
  const done = newEvent(s.run.id, 'attempt:succeeded', { attempt: s.run.attempt, durationMs });
  if (schedule && now < schedule.at) {
    // Ready early: hold the result until the time the user asked for (the slot is free again now).
    logFinishedEarly(engine.logger, schedule, now - (s.run.startedAt ?? s.run.createdAt));
    return engine.store.transition(
      s.run.id,
      {
        status: 'waiting',
        waitReason: 'delivery',
        wakeAt: schedule.at,
        output: output ?? null,
        error: null,
        meta: { ...attemptLog(s, false), decision: null, finishedAt: now },
      },
      [
        ...replayEvents(s),
        done,
        newEvent(s.run.id, 'delivery:held', {
          dueAt: schedule.iso,
          actualMs: now - (s.run.startedAt ?? s.run.createdAt),
        }),
        newEvent(s.run.id, 'run:waiting', { reason: 'delivery', wakeAt: schedule.iso }),
      ],
      { fence: s.fence },
    );
  }
  const delivery = deliversToolResult(s.run, s.options)
    ? resultDelivery(
        s.run,
        { status: 'succeeded', output: output ?? null },
        now,
        engine.delivery.channels,
        engine.logger,
      )
    : undefined;
  return engine.store.transition(
    s.run.id,
    {
      status: 'succeeded',
      output: output ?? null,
      error: null,
      finishedAt: now,
      expiresAt: now + ttlOf(engine, s.run, s.task, s.options),
      meta: { ...attemptLog(s, false), decision: null },
    },
    [
      ...replayEvents(s),
      done,
      ...(delivery?.events ?? []),
      newEvent(s.run.id, 'run:succeeded', { durationMs: now - (s.run.startedAt ?? s.run.createdAt) }),
    ],
    { fence: s.fence },
    delivery?.effects,
  );
}

export async function finishFailed(
  engine: Engine,
  s: AttemptSummary,
  error: unknown,
  timedOut = false,
): Promise<RunRecord> {
  const now = engine.clock.now();
  const serialized = serializeError(error);
  // A scheduled tool's error is delivered at once, never held until its due time.
  const delivery = deliversToolResult(s.run, s.options)
    ? resultDelivery(
        s.run,
        { status: 'failed', error: serialized },
        now,
        engine.delivery.channels,
        engine.logger,
      )
    : undefined;
  return engine.store.transition(
    s.run.id,
    {
      status: 'failed',
      error: serialized,
      finishedAt: now,
      expiresAt: now + ttlOf(engine, s.run, s.task, s.options),
      meta: { failures: s.failures + 1, ...attemptLog(s, timedOut) },
    },
    [
      ...replayEvents(s),
      attemptEndEvent(engine, s, error, timedOut, 0),
      ...(delivery?.events ?? []),
      newEvent(s.run.id, 'run:failed', { error: serialized }),
    ],
    { fence: s.fence },
    delivery?.effects,
  );
}

/** `attempt:timed_out` or `attempt:failed` for the attempt that just ended. */
export function attemptEndEvent(
  engine: Engine,
  s: AttemptSummary,
  error: unknown,
  timedOut: boolean,
  findings: number,
): NewEvent {
  return timedOut
    ? newEvent(s.run.id, 'attempt:timed_out', { attempt: s.run.attempt, timeoutMs: s.timeoutMs, findings })
    : newEvent(s.run.id, 'attempt:failed', {
        attempt: s.run.attempt,
        durationMs: Math.round(engine.clock.monotonic() - s.startedMono),
        error: serializeError(error),
      });
}

/** The protocol's timeout result for an attempt that ran out of time. */
export function timeoutResultOf(
  engine: Engine,
  s: AttemptSummary,
  findings: unknown[],
  searchExhausted = false,
): TimeoutResult {
  return timeoutResult({
    findings,
    searchExhausted,
    timedOutAtMs: engine.clock.now(),
    timeoutMs: s.timeoutMs,
  });
}

/** Errors that another attempt cannot fix: fail at once instead of retrying. */
export function isNonRetriable(error: unknown): boolean {
  return (
    isBatonError(error, 'NON_RETRIABLE') ||
    isBatonError(error, 'INVALID_INPUT') ||
    isBatonError(error, 'TASK_NOT_FOUND') ||
    isBatonError(error, 'INVALID_OPTION') ||
    // A reference that is forbidden or malformed stays so; one not found yet may appear (default retry).
    isBatonError(error, 'REF_PERMISSION_DENIED') ||
    isBatonError(error, 'REF_FORMAT_ERROR') ||
    isBatonError(error, 'REF_PATH_INVALID') ||
    isBatonError(error, 'SCHEDULE_NOT_SUPPORTED') ||
    // fallback_config.strategy "abort" (or on_final_failure "abort" after its own retries).
    isAbortedResolution(error)
  );
}

/** Schedules the next attempt behind a durable timer (a `waiting: timer` row survives restarts). */
export async function scheduleRetry(
  engine: Engine,
  s: AttemptSummary,
  waitMs: number,
  attemptEvent: NewEvent,
  options: { timedOut: boolean; input?: unknown; extraMeta?: Record<string, unknown> },
): Promise<RunRecord> {
  const wakeAt = engine.clock.now() + waitMs;
  return engine.store.transition(
    s.run.id,
    {
      status: 'waiting',
      waitReason: 'timer',
      wakeAt,
      ...(options.input !== undefined ? { input: options.input } : {}),
      meta: {
        failures: s.failures + 1,
        timeoutOverrideMs: null,
        ...attemptLog(s, options.timedOut),
        ...options.extraMeta,
      },
    },
    [
      ...replayEvents(s),
      attemptEvent,
      newEvent(s.run.id, 'attempt:retrying', {
        attempt: s.run.attempt,
        nextAttempt: s.run.attempt + 1,
        waitMs,
        nextTimeoutMs: s.policy.attemptTimeoutMs(s.failures + 2),
      }),
      newEvent(s.run.id, 'run:waiting', { reason: 'timer', wakeAt: new Date(wakeAt).toISOString() }),
    ],
    { fence: s.fence },
  );
}
