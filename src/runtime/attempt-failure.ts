/**
 * What follows an attempt that failed or timed out: the compiled retry policy decides between a
 * retry (after a durable wait, optionally with a new input from onRetry), an escalation (the
 * protocol's decision request) and failing the run; a task with `onTimeout: "park"` instead waits
 * for its client to resume it from its last checkpoint.
 */
import { BatonError, isBatonError, newEvent, serializeError } from '../core/index.ts';
import { escalate } from './decisions.ts';
import type { Engine } from './engine.ts';
import {
  type AttemptSummary,
  attemptEndEvent,
  attemptLog,
  finishFailed,
  isNonRetriable,
  replayEvents,
  scheduleRetry,
  timeoutResultOf,
  ttlOf,
} from './finish-attempt.ts';

/**
 * The protocol's resumable timeout: the run saved its state (the agent loop checkpoints just before
 * its limit) and waits for its client to resume it, instead of being retried automatically.
 */
export async function parkForResume(engine: Engine, s: AttemptSummary, reason: unknown): Promise<void> {
  const now = engine.clock.now();
  const data = isBatonError(reason) ? reason.data : {};
  const invocation = {
    turns: typeof data.turns === 'number' ? data.turns : null,
    toolCalls: typeof data.toolCalls === 'number' ? data.toolCalls : null,
    durationMs:
      typeof data.durationMs === 'number'
        ? data.durationMs
        : Math.round(engine.clock.monotonic() - s.startedMono),
    timeoutMs: s.timeoutMs,
    // What the body says (an agent that rejected its checkpoint started fresh), else whether this
    // attempt had a checkpoint to continue from.
    wasResumed: typeof data.wasResumed === 'boolean' ? data.wasResumed : s.resumedFromCheckpoint,
    canResume: true,
  };
  await engine.store.transition(
    s.run.id,
    {
      status: 'waiting',
      waitReason: 'resume',
      // A parked job nobody resumes is swept like a finished one (the protocol's 24 h TTL).
      expiresAt: now + ttlOf(engine, s.run, s.task, s.options),
      meta: { ...attemptLog(s, true), invocation },
    },
    [
      ...replayEvents(s),
      newEvent(s.run.id, 'attempt:timed_out', {
        attempt: s.run.attempt,
        timeoutMs: s.timeoutMs,
        findings: 0,
      }),
      newEvent(s.run.id, 'run:waiting', {
        reason: 'resume',
        detail: 'a checkpoint was saved; resume to continue',
      }),
    ],
    { fence: s.fence },
  );
}

export async function afterFailure(
  engine: Engine,
  s: AttemptSummary,
  input: unknown,
  error: unknown,
  findings: unknown[],
): Promise<void> {
  if (isNonRetriable(error)) {
    await finishFailed(engine, s, error);
    return;
  }
  const result =
    findings.length > 0
      ? { status: 'failed', partial: true, findings, error: serializeError(error).message }
      : undefined;
  await next(engine, s, input, error, findings, false, result);
}

export async function afterTimeout(
  engine: Engine,
  s: AttemptSummary,
  input: unknown,
  findings: unknown[],
  reason: string,
): Promise<void> {
  const error = new BatonError('TIMEOUT', `task "${s.task.name}" timed out after ${s.timeoutMs} ms`, {
    data: { timeoutMs: s.timeoutMs, findings: findings.length, reason },
    stack: false,
  });
  await next(engine, s, input, error, findings, true, timeoutResultOf(engine, s, findings));
}

async function next(
  engine: Engine,
  s: AttemptSummary,
  input: unknown,
  error: unknown,
  findings: unknown[],
  timedOut: boolean,
  result: unknown,
): Promise<void> {
  const now = engine.clock.now();
  // The per-agent cap on total time only means something when attempts are shorter than it; a task
  // with no mode or timeout runs each attempt under the cap itself.
  const capped = s.policy.baseTimeoutMs < s.policy.agentTimeoutMs;
  let step = s.policy.nextStep({
    attempt: s.failures + 1,
    error,
    partial: { findings },
    ...(capped ? { elapsedMs: now - (s.run.startedAt ?? s.run.createdAt) } : {}),
  });
  // A retry that could not even start before the run's budget ends is not a retry.
  if (step.kind === 'retry' && s.run.deadlineAt !== null && now + step.waitMs >= s.run.deadlineAt)
    step = { kind: 'escalate', reason: 'agent_timeout', menu: 'exhausted' };
  if (step.kind === 'fail') {
    await finishFailed(engine, s, error, timedOut);
    return;
  }
  if (step.kind === 'retry') {
    let nextInput: unknown;
    if (s.task.onRetry) {
      nextInput = await s.task.onRetry({
        input,
        attempt: s.failures + 1,
        error: error instanceof Error ? error : new Error(String(error)),
        findings,
        mode: s.mode,
      });
    }
    await scheduleRetry(
      engine,
      s,
      step.waitMs,
      attemptEndEvent(engine, s, error, timedOut, findings.length),
      {
        timedOut,
        ...(nextInput !== undefined ? { input: nextInput } : {}),
        extraMeta: { lastError: serializeError(error) },
      },
    );
    return;
  }
  await escalate(engine, { s, reason: step.reason, menu: step.menu, error, timedOut, findings, result });
}
