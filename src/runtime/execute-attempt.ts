/**
 * One attempt of one task run, from claim to the transition that records how it ended. The worker
 * calls this for every run it claims and frees the slot when it returns — at the latest at the
 * attempt's deadline plus its grace period, whatever the task body does.
 */
import { BatonError, isBatonError, newEvent, serializeError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import { parseTaskInput } from './define-task.ts';
import type { Engine } from './engine.ts';
import {
  type AttemptSummary,
  finishFailed,
  finishPartial,
  finishSucceeded,
  retryDelay,
  scheduleRetry,
  timeoutFor,
} from './finish-attempt.ts';
import { prepareAttempt } from './prepare-attempt.ts';
import { raceAttempt } from './race-attempt.ts';
import { AttemptContext, type CheckpointInfo } from './task-context.ts';

export interface AttemptHandle {
  readonly runId: string;
  readonly controller: AbortController;
}

export async function executeAttempt(
  engine: Engine,
  run: RunRecord,
  owner: string,
  controller: AbortController,
): Promise<void> {
  const task = engine.tasks.require(run.name);
  const fence = { runId: run.id, token: run.leaseToken };
  const failures = typeof run.meta.failures === 'number' ? run.meta.failures : 0;
  const log = engine.logger.child({ runId: run.id, task: run.name, attempt: run.attempt });
  let timeoutMs = timeoutFor(task, failures);
  if (run.deadlineAt !== null) {
    const left = Math.max(0, run.deadlineAt - engine.clock.now());
    timeoutMs = timeoutMs === null ? left : Math.min(timeoutMs, left);
  }
  const summary: AttemptSummary = {
    run,
    task,
    fence,
    startedMono: engine.clock.monotonic(),
    replayed: [],
    failures,
    timeoutMs,
  };

  try {
    let input: unknown;
    try {
      input = parseTaskInput(task, run.input);
    } catch (err) {
      await finishFailed(engine, summary, err);
      return;
    }
    const prepared = await prepareAttempt(engine, run, task, fence);
    await engine.store.appendEvents(
      [
        newEvent(run.id, 'attempt:started', {
          attempt: run.attempt,
          owner,
          timeoutMs,
          ...(prepared.lastCheckpoint ? { resumedFrom: prepared.lastCheckpoint.seq } : {}),
        }),
        ...(prepared.lastCheckpoint
          ? [newEvent(run.id, 'checkpoint:loaded', { seq: prepared.lastCheckpoint.seq })]
          : []),
      ],
      fence,
    );
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
      version: task.version,
      signal: controller.signal,
      memo: prepared.memo,
      lastCheckpoint: prepared.lastCheckpoint,
      dependencies: prepared.dependencies,
      buildCheckpointRecord: (n, info) => checkpointRecord(engine, run, n, info),
    });
    const outcome = await raceAttempt(() => Promise.resolve().then(() => task.run(input, ctx)), {
      clock: engine.clock,
      controller,
      timeoutMs,
      graceMs: task.graceMs,
    });
    ctx.close(outcome.kind === 'interrupted' ? 'interrupted' : 'finished');
    summary.replayed = ctx.replayed;

    if (outcome.kind === 'ok') {
      await finishSucceeded(engine, summary, outcome.value);
      return;
    }
    if (outcome.kind === 'error') {
      if (isBatonError(outcome.error, 'LEASE_LOST')) throw outcome.error;
      await afterFailure(engine, summary, outcome.error);
      return;
    }
    const reason = outcome.reason;
    if (!isBatonError(reason, 'TIMEOUT')) {
      // Cancelled, lease lost or shutting down: someone else owns what happens next.
      log.info({ reason: serializeError(reason).message }, 'attempt interrupted');
      return;
    }
    await afterTimeout(engine, summary, ctx, outcome.late);
  } catch (err) {
    if (isBatonError(err, 'LEASE_LOST') || isBatonError(err, 'RUN_NOT_FOUND')) {
      log.warn({ err: serializeError(err).message }, 'lease lost; the attempt stops without writing');
      return;
    }
    log.error({ err: serializeError(err) }, 'attempt could not record its end');
    throw err;
  }
}

async function afterFailure(engine: Engine, s: AttemptSummary, error: unknown): Promise<void> {
  const wait = retryDelay(s, error);
  const serialized = serializeError(error);
  if (wait === undefined) {
    await finishFailed(engine, s, error);
    return;
  }
  await scheduleRetry(
    engine,
    s,
    wait,
    newEvent(s.run.id, 'attempt:failed', {
      attempt: s.run.attempt,
      durationMs: Math.round(engine.clock.monotonic() - s.startedMono),
      error: serialized,
    }),
    { lastError: serialized },
  );
}

async function afterTimeout(
  engine: Engine,
  s: AttemptSummary,
  ctx: AttemptContext,
  late: { kind: 'ok'; value: unknown } | { kind: 'error'; error: unknown } | undefined,
): Promise<void> {
  const timeoutMs = s.timeoutMs ?? 0;
  const findings =
    ctx.findings.length > 0
      ? ctx.findings
      : late?.kind === 'ok' && late.value !== undefined
        ? [late.value]
        : [];
  const result = {
    status: 'timeout',
    partial: true,
    findings,
    search_exhausted: false,
    timed_out_at: new Date(engine.clock.now()).toISOString(),
    timeout_duration_seconds: Math.round(timeoutMs / 1000),
  };
  const error = new BatonError('TIMEOUT', `task "${s.task.name}" timed out after ${timeoutMs} ms`, {
    data: { timeoutMs, findings: findings.length },
  });
  const timedOut = newEvent(s.run.id, 'attempt:timed_out', {
    attempt: s.run.attempt,
    timeoutMs,
    findings: findings.length,
  });
  const wait = retryDelay(s, error);
  if (wait !== undefined) {
    await scheduleRetry(engine, s, wait, timedOut, { lastTimeout: result });
    return;
  }
  if (findings.length > 0) {
    await engine.store.appendEvents([timedOut], s.fence);
    await finishPartial(engine, s, result, serializeError(error));
  } else {
    await engine.store.appendEvents([timedOut], s.fence);
    await finishFailed(engine, s, error);
  }
}

function checkpointRecord(
  engine: Engine,
  run: RunRecord,
  n: number,
  info: CheckpointInfo,
): Record<string, unknown> {
  const items = info.itemsAnalyzed ?? null;
  const progress =
    items !== null && info.itemsTotal ? Math.round((items / info.itemsTotal) * 10_000) / 100 : null;
  return {
    checkpoint_id: `${run.stepId ?? run.name}_${String(n).padStart(3, '0')}`,
    timestamp: new Date(engine.clock.now()).toISOString(),
    items_analyzed: items,
    progress_percentage: progress,
    status: info.status ?? 'in_progress',
  };
}

export type { TaskDefinition };
