/**
 * One attempt of one task run, from claim to the transition that records how it ended. The worker
 * calls this for every run it claims and frees the slot when it returns — at the latest at the
 * attempt's deadline plus its grace period, whatever the task body does.
 */

import type { Logger } from 'pino';
import {
  BatonError,
  isBatonError,
  type NewEvent,
  newEvent,
  type RetryPolicy,
  serializeError,
} from '../core/index.ts';
import { hasReferences } from '../refs/index.ts';
import type { RunRecord } from '../store/index.ts';
import { AttemptContext } from './attempt-context.ts';
import { afterFailure, afterTimeout, parkForResume } from './attempt-failure.ts';
import { parseTaskInput } from './define-task.ts';
import { Suspension } from './durable-waits.ts';
import type { Engine } from './engine.ts';
import { fetchReference } from './fetch-reference.ts';
import { type AttemptSummary, finishFailed, finishSucceeded, ttlOf } from './finish-attempt.ts';
import { startChild } from './invoke-child.ts';
import type { LazyAbort } from './lazy-abort.ts';
import { type PreparedAttempt, prepareAttempt } from './prepare-attempt.ts';
import { raceAttempt, type Settled } from './race-attempt.ts';
import { runMetaOf } from './run-meta.ts';
import { runOptionsOf } from './run-options.ts';
import { prepareStepInput } from './step-inputs.ts';
import { suspendRun } from './suspend-run.ts';
import { startThreadAttempt, type ThreadAttempt } from './thread/index.ts';
import type { TimeKeeperInit } from './time-keeper.ts';

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
  const task = engine.tasks.require(run.name);
  const fence = { runId: run.id, token: run.leaseToken, ...(claim !== undefined ? { claim } : {}) };
  const meta = runMetaOf(run);
  const options = runOptionsOf(run);
  const { failures } = meta;
  const mode = meta.modeOverride ?? options.mode ?? task.mode;
  const fast = options.fast === true;
  let policy: RetryPolicy;
  try {
    policy = task.policy({ mode, fast });
  } catch (err) {
    // A mode that no longer exists (changed task definitions): fail the run rather than hold it.
    const now = engine.clock.now();
    const error = serializeError(err);
    await engine.store.transition(
      run.id,
      { status: 'failed', error, finishedAt: now, expiresAt: now + ttlOf(engine, run, task, options) },
      [newEvent(run.id, 'run:failed', { error })],
      { fence },
    );
    return;
  }
  let timeoutMs = meta.timeoutOverrideMs ?? policy.attemptTimeoutMs(failures + 1);
  if (run.deadlineAt !== null)
    timeoutMs = Math.min(timeoutMs, Math.max(0, run.deadlineAt - engine.clock.now()));
  // A serverless host's hard limit (less its safety margin) caps every invocation.
  if (options.invocationTimeoutMs !== undefined) timeoutMs = Math.min(timeoutMs, options.invocationTimeoutMs);
  // Built on first use: only an attempt that logs pays for its child logger.
  let log_: Logger | undefined;
  const log = (): Logger => {
    log_ ??= engine.logger.child({ runId: run.id, task: run.name, attempt: run.attempt });
    return log_;
  };
  const s: AttemptSummary = {
    run,
    options,
    meta,
    task,
    fence,
    policy,
    mode,
    startedMono: engine.clock.monotonic(),
    replayed: [],
    failures,
    timeoutMs,
    resumedFromCheckpoint: false,
  };

  try {
    // Inputs with references are checked after they are resolved, inside the attempt.
    let input: unknown = run.input;
    const referenced = hasReferences(run.input);
    if (!referenced) {
      try {
        input = parseTaskInput(task, run.input);
      } catch (err) {
        await finishFailed(engine, s, err);
        return;
      }
    }
    const preparing = prepareAttempt(engine, run, task, fence);
    const prepared = preparing instanceof Promise ? await preparing : preparing;
    s.resumedFromCheckpoint = prepared.lastCheckpoint !== undefined;
    if (timeoutMs <= 0) {
      // The run's budget is spent before this attempt could start: escalate with what is saved.
      const findings = findingsOf(prepared, []);
      await afterTimeout(engine, s, input, findings, 'budget_exhausted');
      return;
    }
    // Nothing waits for this commit: the claim already committed the lease that makes the attempt
    // ours, and the write queue is first-in first-out, so the event still lands before anything the
    // body or the outcome writes. A failure (the lease lost meanwhile) stops the attempt.
    // Built by push, not spreads of conditional arrays: this runs once per attempt.
    const startedData: { attempt: number; owner: string; timeoutMs: number; resumedFrom?: number } = {
      attempt: run.attempt,
      owner,
      timeoutMs,
    };
    if (prepared.lastCheckpoint) startedData.resumedFrom = prepared.lastCheckpoint.seq;
    const startEvents: NewEvent[] = [newEvent(run.id, 'attempt:started', startedData)];
    if (prepared.lastCheckpoint)
      startEvents.push(newEvent(run.id, 'checkpoint:loaded', { seq: prepared.lastCheckpoint.seq }));
    if (fast && failures === 0 && run.attempt === 1 && policy.warning)
      startEvents.push(newEvent(run.id, 'log:message', { level: 'warn' as const, message: policy.warning }));
    const started = engine.store.appendEvents(startEvents, fence);
    let startError: { error: unknown } | undefined;
    started.catch((error: unknown) => {
      startError = { error };
      controller.abort(error);
    });
    // Assigned, not spread from conditional objects: each spread is a temporary object per attempt.
    const checkpoints: TimeKeeperInit['checkpoints'] = {};
    if (task.agent !== undefined) checkpoints.agent = task.agent;
    if (task.checkpointEvery !== null) checkpoints.every = task.checkpointEvery;
    const time: TimeKeeperInit = {
      startMs: run.startedAt ?? engine.clock.now(),
      budgetMs: run.budgetMs ?? policy.agentTimeoutMs,
      checkpoints,
      itemsAnalyzed: prepared.lastCheckpoint?.itemsAnalyzed ?? 0,
    };
    if (task.thresholds) time.thresholds = task.thresholds;
    if (task.degradation) time.degradation = task.degradation;
    const ctx = new AttemptContext({
      store: engine.store,
      clock: engine.clock,
      log,
      fence,
      runId: run.id,
      rootId: run.rootId,
      stepId: run.stepId,
      taskName: task.name,
      attempt: run.attempt,
      timeoutMs,
      deadlineAt: run.deadlineAt,
      version: task.version,
      abort: controller,
      memo: prepared.memo,
      lastCheckpoint: prepared.lastCheckpoint,
      lastSeq: prepared.lastSeq,
      dependencies: prepared.dependencies,
      mode,
      fast,
      time,
      fetchRef: (reference, signal) => fetchReference(engine, run, task, reference, signal),
      startChild: (child, childInput, options, id) => startChild(engine, run, child, childInput, options, id),
    });
    let thread: ThreadAttempt | undefined;
    const raw = input;
    const body = async () => {
      // Resolving references and planning the context happen under the attempt's deadline.
      const ready = referenced
        ? parseTaskInput(
            task,
            (
              await prepareStepInput(engine.inputs, ctx, task, raw, run, {
                transfer: options.transfer,
              })
            ).input,
          )
        : raw;
      if (task.isolation !== 'thread') return task.run(ready, ctx);
      thread = startThreadAttempt({
        module: task.module as string,
        taskName: task.name,
        input: ready,
        ctx,
        time,
      });
      return thread.result;
    };
    const outcome = await raceAttempt(body, {
      clock: engine.clock,
      controller,
      timeoutMs,
      graceMs: task.graceMs,
      // A body that can go no further without a durable wait ends the attempt (see durable-waits.ts).
      settleEarly: (settle) =>
        ctx.waits.whenSuspended((waits) => settle({ kind: 'error', error: new Suspension(waits) })),
    });
    ctx.close(outcome.kind === 'interrupted' ? 'interrupted' : 'finished');
    // The hard deadline: timeout and grace have passed (or the task ended); a spinning thread stops here.
    await thread?.terminate();
    // Not awaited: the outcome's write follows the event in the same queue, often the same commit,
    // and is fenced the same way. A failure already seen ends the attempt here.
    if (startError) throw startError.error;
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
      (outcome.kind === 'interrupted' &&
        isBatonError(outcome.reason, 'TIMEOUT') &&
        task.onTimeout === 'park');
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
      log().info({ reason: serializeError(outcome.reason).message }, 'attempt interrupted');
      return;
    }
    await afterTimeout(engine, s, input, findingsOf(prepared, ctx.findings, outcome.late), 'timeout');
  } catch (err) {
    if (isBatonError(err, 'LEASE_LOST') || isBatonError(err, 'RUN_NOT_FOUND')) {
      log().warn({ err: serializeError(err).message }, 'lease lost; the attempt stops without writing');
      return;
    }
    if (isBatonError(err, 'STORE_UNAVAILABLE')) {
      // A full disk or an I/O error: ending the run as failed would not be written either, and
      // the attempt's work is kept (memoized steps, checkpoints). The run stays under its lease,
      // which this worker no longer renews, and is retried when the lease expires.
      log().warn(
        { err: serializeError(err).message },
        'the store cannot record the end of the attempt; retried after its lease',
      );
      throw err;
    }
    log().error({ err: serializeError(err) }, 'attempt could not record its end');
    // Left running, the run would be claimed again after its lease, fail the same way and be
    // requeued forever. End it as failed (fenced, so a lost lease still writes nothing); if even
    // that write fails, the store is the problem and lease recovery retries later.
    const now = engine.clock.now();
    const error = serializeError(
      new BatonError(
        'TASK_FAILED',
        `the end of attempt ${run.attempt} could not be recorded: ${serializeError(err).message}`,
        {
          cause: err,
        },
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
}

/** The findings a timeout hands back: this attempt's, else what it returned in its grace, else the last checkpoint's. */
function findingsOf(prepared: PreparedAttempt, recorded: unknown[], late?: Settled): unknown[] {
  if (recorded.length > 0) return recorded;
  if (late?.kind === 'ok' && late.value !== undefined)
    return Array.isArray(late.value) ? late.value : [late.value];
  const state = prepared.lastCheckpoint?.state as { findings?: unknown } | undefined;
  return Array.isArray(state?.findings) ? state.findings : [];
}
