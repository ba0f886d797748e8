/**
 * One attempt of one task run, from claim to the transition that records how it ended. The worker
 * calls this for every run it claims and frees the slot when it returns — at the latest at the
 * attempt's deadline plus its grace period, whatever the task body does.
 */

import {
  BatonError,
  isBatonError,
  type NewEvent,
  newEvent,
  type RetryPolicy,
  serializeError,
} from '../core/index.ts';
import { hasReferences } from '../refs/index.ts';
import type { Fence, RunRecord } from '../store/index.ts';
import { AttemptContext } from './attempt-context.ts';
import { afterFailure, afterTimeout, parkForResume } from './attempt-failure.ts';
import { AttemptInit, attemptLogger } from './attempt-init.ts';
import { parseTaskInput, type TaskDefinition } from './define-task.ts';
import { Suspension } from './durable-waits.ts';
import type { Engine } from './engine.ts';
import { type AttemptSummary, finishFailed, finishSucceeded, ttlOf } from './finish-attempt.ts';
import type { LazyAbort } from './lazy-abort.ts';
import { type PreparedAttempt, prepareAttempt } from './prepare-attempt.ts';
import { type RaceOutcome, raceAttempt, type Settled } from './race-attempt.ts';
import { runMetaOf } from './run-meta.ts';
import { runOptionsOf } from './run-options.ts';
import { prepareStepInput } from './step-inputs.ts';
import { suspendRun } from './suspend-run.ts';
import type { CheckpointView } from './task-context.ts';
import { startThreadAttempt, type ThreadAttempt } from './thread/index.ts';

/**
 * Runs one attempt. This frame stays alive while the body runs, so it holds only the attempt's
 * object: what starting the body needed is made in beginAttempt and dropped when it returns, and
 * what recording the end needs runs after the body (endAttempt). With a thousand attempts waiting
 * together, every byte an attempt holds is copied by the young generation's collector while their
 * deadlines come due (issue 18 item 5).
 */
export async function executeAttempt(
  engine: Engine,
  run: RunRecord,
  owner: string,
  controller: LazyAbort,
  /**
   * Called once the body is over and only its end is left to record (the worker claims again); a
   * promise returned defers recording the end until it settles (a burst of runs still starting).
   */
  onEnding: () => Promise<void> | undefined = () => undefined,
  /** The name of the claim that gave the lease (ClaimRequest.claim): the fence carries it. */
  claim?: string,
): Promise<void> {
  const s = summarizeAttempt(engine, run, claim);
  if (s instanceof PolicyFailure) return failWithoutPolicy(engine, run, s);
  try {
    const begun = beginAttempt(engine, s, owner, controller);
    const attempt = begun instanceof Promise ? await begun : begun;
    // Ended before its body (a bad input, a spent budget).
    if (attempt === undefined) return;
    const outcome = await attempt.outcome;
    await endAttempt(engine, attempt, outcome, controller, onEnding);
  } catch (err) {
    await attemptBroke(engine, s, err);
  }
}

/** A task body under way: what recording its end needs. */
class RunningAttempt {
  /** The attempt:started write failed (the lease was lost meanwhile): the attempt stops. */
  startError: { error: unknown } | undefined;
  /** The body's worker thread, for a task isolated in one (started by the body). */
  thread: ThreadAttempt | undefined;
  outcome!: Promise<RaceOutcome>;

  constructor(
    readonly s: AttemptSummary,
    readonly input: unknown,
    readonly init: AttemptInit,
    readonly ctx: AttemptContext,
  ) {}
}

/** The task's retry policy could not be built (a mode that no longer exists). */
class PolicyFailure {
  constructor(
    readonly error: unknown,
    readonly fence: Fence,
    readonly task: TaskDefinition,
  ) {}
}

function summarizeAttempt(
  engine: Engine,
  run: RunRecord,
  claim: string | undefined,
): AttemptSummary | PolicyFailure {
  const task = engine.tasks.require(run.name);
  const fence: Fence =
    claim !== undefined
      ? { runId: run.id, token: run.leaseToken, claim }
      : { runId: run.id, token: run.leaseToken };
  const meta = runMetaOf(run);
  const options = runOptionsOf(run);
  const { failures } = meta;
  const mode = meta.modeOverride ?? options.mode ?? task.mode;
  let policy: RetryPolicy;
  try {
    policy = task.policy({ mode, fast: options.fast === true });
  } catch (err) {
    return new PolicyFailure(err, fence, task);
  }
  let timeoutMs = meta.timeoutOverrideMs ?? policy.attemptTimeoutMs(failures + 1);
  if (run.deadlineAt !== null)
    timeoutMs = Math.min(timeoutMs, Math.max(0, run.deadlineAt - engine.clock.now()));
  // A serverless host's hard limit (less its safety margin) caps every invocation.
  if (options.invocationTimeoutMs !== undefined) timeoutMs = Math.min(timeoutMs, options.invocationTimeoutMs);
  return {
    run,
    options,
    meta,
    task,
    fence,
    policy,
    mode,
    startedMono: engine.clock.monotonic(),
    replayed: NO_KEYS,
    failures,
    timeoutMs,
    resumedFromCheckpoint: false,
  };
}

const NO_KEYS: readonly string[] = Object.freeze([]);

/** A mode that no longer exists (changed task definitions): fail the run rather than hold it. */
async function failWithoutPolicy(engine: Engine, run: RunRecord, f: PolicyFailure): Promise<void> {
  const now = engine.clock.now();
  const error = serializeError(f.error);
  await engine.store.transition(
    run.id,
    { status: 'failed', error, finishedAt: now, expiresAt: now + ttlOf(engine, run, f.task) },
    [newEvent(run.id, 'run:failed', { error })],
    { fence: f.fence },
  );
}

/**
 * Checks the input, reads what earlier attempts recorded (nothing on a first lease: then all of
 * this is synchronous) and starts the body. A promise when that needs a read or the attempt ends
 * before its body; undefined for the latter.
 */
function beginAttempt(
  engine: Engine,
  s: AttemptSummary,
  owner: string,
  controller: LazyAbort,
): RunningAttempt | Promise<RunningAttempt | undefined> {
  const { run, task } = s;
  // Inputs with references are checked after they are resolved, inside the attempt.
  let input: unknown = run.input;
  const referenced = hasReferences(run.input);
  if (!referenced) {
    try {
      input = parseTaskInput(task, run.input);
    } catch (err) {
      return finishFailed(engine, s, err).then(() => undefined);
    }
  }
  const preparing = prepareAttempt(engine, run, task, s.fence);
  if (preparing instanceof Promise)
    return preparing.then((prepared) => startBody(engine, s, owner, controller, input, referenced, prepared));
  return startBody(engine, s, owner, controller, input, referenced, preparing);
}

function startBody(
  engine: Engine,
  s: AttemptSummary,
  owner: string,
  controller: LazyAbort,
  input: unknown,
  referenced: boolean,
  prepared: PreparedAttempt,
): RunningAttempt | Promise<undefined> {
  const { run, task } = s;
  s.resumedFromCheckpoint = prepared.lastCheckpoint !== undefined;
  if (s.timeoutMs <= 0) {
    // The run's budget is spent before this attempt could start: escalate with what is saved.
    const findings = findingsOf(prepared.lastCheckpoint, []);
    return afterTimeout(engine, s, input, findings, 'budget_exhausted').then(() => undefined);
  }
  const init = new AttemptInit(engine, s, controller, prepared);
  const ctx = new AttemptContext(init);
  const attempt = new RunningAttempt(s, input, init, ctx);
  // Nothing waits for this commit: the claim already committed the lease that makes the attempt
  // ours, and the write queue is first-in first-out, so the event still lands before anything the
  // body or the outcome writes. A failure (the lease lost meanwhile) stops the attempt.
  // Built by push, not spreads of conditional arrays: this runs once per attempt.
  const startedData: { attempt: number; owner: string; timeoutMs: number; resumedFrom?: number } = {
    attempt: run.attempt,
    owner,
    timeoutMs: s.timeoutMs,
  };
  if (prepared.lastCheckpoint) startedData.resumedFrom = prepared.lastCheckpoint.seq;
  const startEvents: NewEvent[] = [newEvent(run.id, 'attempt:started', startedData)];
  if (prepared.lastCheckpoint)
    startEvents.push(newEvent(run.id, 'checkpoint:loaded', { seq: prepared.lastCheckpoint.seq }));
  if (s.options.fast === true && s.failures === 0 && run.attempt === 1 && s.policy.warning)
    startEvents.push(newEvent(run.id, 'log:message', { level: 'warn' as const, message: s.policy.warning }));
  engine.store.appendEvents(startEvents, s.fence).catch((error: unknown) => {
    attempt.startError = { error };
    controller.abort(error);
  });
  const body = async () => {
    // Resolving references and planning the context happen under the attempt's deadline.
    const ready = referenced
      ? parseTaskInput(
          task,
          (await prepareStepInput(engine.inputs, ctx, task, input, run, { transfer: s.options.transfer }))
            .input,
        )
      : input;
    if (task.isolation !== 'thread') return task.run(ready, ctx);
    attempt.thread = startThreadAttempt({
      module: task.module as string,
      taskName: task.name,
      input: ready,
      ctx,
      time: init.time,
    });
    return attempt.thread.result;
  };
  attempt.outcome = raceAttempt(body, {
    clock: engine.clock,
    controller,
    timeoutMs: s.timeoutMs,
    graceMs: task.graceMs,
    // A body that can go no further without a durable wait ends the attempt (see durable-waits.ts).
    settleEarly: (settle) =>
      ctx.waits.whenSuspended((waits) => settle({ kind: 'error', error: new Suspension(waits) })),
  });
  return attempt;
}

/** Records how the body ended: a success, a failure, a timeout, a suspension, or nothing (interrupted). */
async function endAttempt(
  engine: Engine,
  attempt: RunningAttempt,
  outcome: RaceOutcome,
  controller: LazyAbort,
  onEnding: () => Promise<void> | undefined,
): Promise<void> {
  const { s, ctx, input } = attempt;
  const { task } = s;
  ctx.close(outcome.kind === 'interrupted' ? 'interrupted' : 'finished');
  // The hard deadline: timeout and grace have passed (or the task ended); a spinning thread stops here.
  await attempt.thread?.terminate();
  // Not awaited: the outcome's write follows the event in the same queue, often the same commit,
  // and is fenced the same way. A failure already seen ends the attempt here.
  if (attempt.startError) throw attempt.startError.error;
  s.replayed = ctx.replayed;
  const later = onEnding();
  if (later) await later;

  if (outcome.kind === 'error' && outcome.error instanceof Suspension) {
    // The abandoned body's signal-aware work stops; its context already refuses writes.
    controller.abort(new BatonError('CANCELLED', 'the attempt suspended: the run waits durably'));
    await suspendRun(engine, s, outcome.error.waits);
    return;
  }

  if (outcome.kind === 'ok') {
    await finishSucceeded(engine, s, outcome.value);
    return;
  }
  // A park-on-timeout task (an agent) that returned within its grace period finished: its result
  // stands rather than being parked and replayed. Other tasks' late values are timeout findings.
  if (
    task.onTimeout === 'park' &&
    outcome.kind === 'interrupted' &&
    outcome.late?.kind === 'ok' &&
    isBatonError(outcome.reason, 'TIMEOUT')
  ) {
    await finishSucceeded(engine, s, outcome.late.value);
    return;
  }
  const resumable =
    (outcome.kind === 'error' &&
      isBatonError(outcome.error, 'TIMEOUT') &&
      outcome.error.data.resumable === true) ||
    (outcome.kind === 'interrupted' && isBatonError(outcome.reason, 'TIMEOUT') && task.onTimeout === 'park');
  if (resumable) {
    await parkForResume(engine, s, outcome.kind === 'error' ? outcome.error : outcome.reason);
    return;
  }
  if (outcome.kind === 'error') {
    if (isBatonError(outcome.error, 'LEASE_LOST')) throw outcome.error;
    await afterFailure(engine, s, input, outcome.error, ctx.findings.length > 0 ? ctx.findings : []);
    return;
  }
  if (!isBatonError(outcome.reason, 'TIMEOUT')) {
    // Cancelled, lease lost or shutting down: someone else owns what happens next.
    attempt.init.log().info({ reason: serializeError(outcome.reason).message }, 'attempt interrupted');
    return;
  }
  await afterTimeout(
    engine,
    s,
    input,
    findingsOf(attempt.init.lastCheckpoint, ctx.findings, outcome.late),
    'timeout',
  );
}

/** The attempt could not go on or record its end: a lost lease, an unavailable store, a bug. */
async function attemptBroke(engine: Engine, s: AttemptSummary, err: unknown): Promise<void> {
  const { run, task, options, failures, fence } = s;
  if (isBatonError(err, 'LEASE_LOST') || isBatonError(err, 'RUN_NOT_FOUND')) {
    attemptLogger(engine, s).warn(
      { err: serializeError(err).message },
      'lease lost; the attempt stops without writing',
    );
    return;
  }
  if (isBatonError(err, 'STORE_UNAVAILABLE')) {
    // A full disk or an I/O error: ending the run as failed would not be written either, and
    // the attempt's work is kept (memoized steps, checkpoints). The run stays under its lease,
    // which this worker no longer renews, and is retried when the lease expires.
    attemptLogger(engine, s).warn(
      { err: serializeError(err).message },
      'the store cannot record the end of the attempt; retried after its lease',
    );
    throw err;
  }
  attemptLogger(engine, s).error({ err: serializeError(err) }, 'attempt could not record its end');
  // Left running, the run would be claimed again after its lease, fail the same way and be
  // requeued forever. End it as failed (fenced, so a lost lease still writes nothing); if even
  // that write fails, the store is the problem and lease recovery retries later.
  const now = engine.clock.now();
  const error = serializeError(
    new BatonError(
      'TASK_FAILED',
      `the end of attempt ${run.attempt} could not be recorded: ${serializeError(err).message}`,
      { cause: err },
    ),
  );
  await engine.store
    .transition(
      run.id,
      {
        status: 'failed',
        error,
        finishedAt: now,
        expiresAt: now + ttlOf(engine, run, task, options),
        meta: { failures: failures + 1 },
      },
      [newEvent(run.id, 'run:failed', { error })],
      { fence },
    )
    .catch(() => undefined);
  throw err;
}

/** The findings a timeout hands back: this attempt's, else what it returned in its grace, else the last checkpoint's. */
function findingsOf(
  lastCheckpoint: CheckpointView | undefined,
  recorded: unknown[],
  late?: Settled,
): unknown[] {
  if (recorded.length > 0) return recorded;
  if (late?.kind === 'ok' && late.value !== undefined)
    return Array.isArray(late.value) ? late.value : [late.value];
  const state = lastCheckpoint?.state as { findings?: unknown } | undefined;
  return Array.isArray(state?.findings) ? state.findings : [];
}
