/** Creating runs and moving them through the state machine, flows advancing in the same transaction. */
import {
  assertTransition,
  BatonError,
  decideFlow,
  flowTimeoutState,
  isTerminal,
  type NewEvent,
  newEvent,
  type RunStatus,
  serializeError,
} from '../../core/index.ts';
import type { Effects, NewRun, RunRecord } from '../records.ts';
import type { RunPatch, TransitionGuard } from '../store.ts';
import { writeEffects } from './deliveries.ts';
import { json, type RunRow, toRun } from './rows.ts';
import type { SqliteContext } from './sqlite-context.ts';
import type { WriteScope } from './write-queue.ts';

const INSERT_RUN = `INSERT INTO runs (id, parent_id, root_id, step_id, kind, name, input, status, wait_reason, wake_at,
  depends_on, priority, created_at, updated_at, budget_ms, source, options, meta, started_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export function createRuns(
  ctx: SqliteContext,
  runs: readonly NewRun[],
  events: readonly NewEvent[],
  effects?: Effects,
): Promise<void> {
  // Serialize outside the transaction: a value that is not JSON fails here, before anything is written.
  const rows = runs.map((r) => [
    r.id,
    r.parentId ?? null,
    r.rootId ?? r.id,
    r.stepId ?? null,
    r.kind,
    r.name,
    json(r.input),
    r.status,
    r.waitReason ?? null,
    r.wakeAt ?? null,
    json(r.dependsOn ?? []),
    r.priority ?? 0,
    0,
    0,
    r.budgetMs ?? null,
    r.source ?? null,
    json(r.options ?? {}),
    json(r.meta ?? {}),
    null,
  ]);
  return ctx.write((scope) => {
    const now = ctx.now();
    const insert = ctx.stmt(INSERT_RUN);
    for (const row of rows) {
      row[12] = now;
      row[13] = now;
      // Flows are never claimed; they start when they are created.
      if (row[7] === 'running') row[18] = now;
      try {
        insert.run(...row);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
          throw new BatonError('RUN_CONFLICT', `a run with id ${String(row[0])} already exists`, {
            cause: err,
            data: { runId: row[0] },
          });
        throw err;
      }
    }
    ctx.appendEvents(scope, events);
    writeEffects(ctx, effects);
  });
}

export function getRunSync(ctx: SqliteContext, id: string): RunRecord | undefined {
  const row = ctx.stmt('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  return row ? toRun(row) : undefined;
}

function requireRun(ctx: SqliteContext, id: string): RunRecord {
  const run = getRunSync(ctx, id);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  return run;
}

export function transition(
  ctx: SqliteContext,
  runId: string,
  patch: RunPatch,
  events: readonly NewEvent[],
  guard: TransitionGuard = {},
  effects?: Effects,
): Promise<RunRecord> {
  const encoded = encodePatch(patch);
  return ctx.write((scope) => {
    const run = transitionSync(ctx, scope, runId, patch, encoded, events, guard);
    writeEffects(ctx, effects);
    return run;
  });
}

export function transitionAll(
  ctx: SqliteContext,
  changes: ReadonlyArray<{
    runId: string;
    patch: RunPatch;
    events: readonly NewEvent[];
    guard?: TransitionGuard;
    effects?: Effects;
  }>,
): Promise<RunRecord[]> {
  const encoded = changes.map((c) => encodePatch(c.patch));
  return ctx.write((scope) =>
    changes.map((c, i) => {
      const run = transitionSync(
        ctx,
        scope,
        c.runId,
        c.patch,
        encoded[i] as EncodedPatch,
        c.events,
        c.guard ?? {},
      );
      writeEffects(ctx, c.effects);
      return run;
    }),
  );
}

interface EncodedPatch {
  sets: string[];
  values: unknown[];
  /** The patched fields as they read back from the row (JSON columns round-tripped). */
  fields: Partial<RunRecord>;
}

function encodePatch(patch: RunPatch): EncodedPatch {
  const sets: string[] = [];
  const values: unknown[] = [];
  const fields: Partial<RunRecord> = {};
  const add = <K extends keyof RunRecord>(col: string, key: K, value: RunRecord[K]) => {
    sets.push(`${col} = ?`);
    values.push(value);
    fields[key] = value;
  };
  // JSON columns: stored as text, and read back as the text parses (what a reader would get).
  const addJson = <K extends keyof RunRecord>(col: string, key: K, value: unknown) => {
    const text = json(value);
    sets.push(`${col} = ?`);
    values.push(text);
    fields[key] = JSON.parse(text) as RunRecord[K];
  };
  if (patch.status !== undefined) add('status', 'status', patch.status);
  if (patch.waitReason !== undefined) add('wait_reason', 'waitReason', patch.waitReason);
  if (patch.wakeAt !== undefined) add('wake_at', 'wakeAt', patch.wakeAt);
  if (patch.output !== undefined) addJson('output', 'output', patch.output);
  if (patch.error === null) add('error', 'error', null);
  else if (patch.error !== undefined) addJson('error', 'error', patch.error);
  if (patch.finishedAt !== undefined) add('finished_at', 'finishedAt', patch.finishedAt);
  if (patch.expiresAt !== undefined) add('expires_at', 'expiresAt', patch.expiresAt);
  if (patch.input !== undefined) addJson('input', 'input', patch.input);
  if (patch.resetAttempts) {
    sets.push('attempt = 0');
    fields.attempt = 0;
  }
  return { sets, values, fields };
}

function transitionSync(
  ctx: SqliteContext,
  scope: WriteScope,
  runId: string,
  patch: RunPatch,
  encoded: EncodedPatch,
  events: readonly NewEvent[],
  guard: TransitionGuard,
): RunRecord {
  if (guard.fence) ctx.checkFence(guard.fence);
  const run = requireRun(ctx, runId);
  if (guard.expectStatus && !guard.expectStatus.includes(run.status)) {
    throw new BatonError(
      'RUN_CONFLICT',
      `run ${runId} is ${run.status}${run.leaseOwner ? ` (held by ${run.leaseOwner})` : ''}, expected ${guard.expectStatus.join(' or ')}`,
      { data: { runId, status: run.status, holder: run.leaseOwner } },
    );
  }
  const to = patch.status ?? run.status;
  if (to !== run.status) assertTransition(runId, run.status, to);
  const now = ctx.now();
  const sets = [...encoded.sets, 'updated_at = ?'];
  const values = [...encoded.values, now];
  // The record as it now reads, built from the row just read rather than read (and decoded) again.
  const updated: RunRecord = { ...run, ...encoded.fields, updatedAt: now };
  // Leaving `running` always drops the lease; the token stays, so the old attempt stays fenced off.
  if (patch.releaseLease || (run.status === 'running' && to !== 'running')) {
    sets.push('lease_owner = NULL', 'lease_expires_at = NULL');
    updated.leaseOwner = null;
    updated.leaseExpiresAt = null;
  }
  if (patch.meta) {
    const meta = json({ ...run.meta, ...patch.meta });
    sets.push('meta = ?');
    values.push(meta);
    updated.meta = JSON.parse(meta) as Record<string, unknown>;
  }
  const changed = ctx.stmt(`UPDATE runs SET ${sets.join(', ')} WHERE id = ?`).run(...values, runId);
  if (changed.changes !== 1) throw new BatonError('RUN_NOT_FOUND', `run ${runId} does not exist`);
  ctx.appendEvents(scope, events);
  if (to !== run.status && isTerminal(to)) {
    if (run.kind === 'flow') cancelOpenSteps(ctx, scope, run.id, to);
    if (run.parentId) advanceFlow(ctx, scope, run.parentId);
  } else if (run.parentId && to === 'waiting' && patch.waitReason === 'delivery') {
    // Finished executing, delivery held: its dependents may start now (see decideFlow).
    advanceFlow(ctx, scope, run.parentId);
  }
  // A flow's own row only changes through its steps when its step ended; re-read it in that case.
  return run.kind === 'flow' && to !== run.status && isTerminal(to) ? requireRun(ctx, runId) : updated;
}

/** A flow that ends (cancelled, expired, failed by a decision) takes its unfinished steps with it. */
function cancelOpenSteps(ctx: SqliteContext, scope: WriteScope, flowId: string, flowStatus: RunStatus): void {
  const open = ctx
    .stmt("SELECT id FROM runs WHERE parent_id = ? AND status IN ('queued', 'running', 'waiting')")
    .all(flowId) as Array<{ id: string }>;
  const now = ctx.now();
  for (const { id } of open) {
    ctx
      .stmt(
        "UPDATE runs SET status = 'cancelled', wait_reason = NULL, wake_at = NULL, lease_owner = NULL, lease_expires_at = NULL, finished_at = ?, updated_at = ? WHERE id = ?",
      )
      .run(now, now, id);
    ctx.appendEvents(scope, [
      newEvent(id, 'run:cancelled', { reason: `its flow ${flowId} ended ${flowStatus}` }),
    ]);
  }
}

function advanceFlow(ctx: SqliteContext, scope: WriteScope, flowId: string): void {
  const flow = getRunSync(ctx, flowId);
  if (!flow || isTerminal(flow.status)) return;
  const children = (ctx.stmt('SELECT * FROM runs WHERE parent_id = ?').all(flowId) as RunRow[]).map(toRun);
  const decision = decideFlow(
    children.map((c) => ({
      stepId: c.stepId ?? c.id,
      status: c.status,
      waitReason: c.waitReason,
      dependsOn: c.dependsOn,
    })),
  );
  const byStep = new Map(children.map((c) => [c.stepId ?? c.id, c]));
  const now = ctx.now();
  for (const b of decision.blocked) {
    const child = byStep.get(b.stepId);
    if (!child) continue;
    const error = serializeError(
      new BatonError(
        'DEPENDENCY_FAILED',
        `step "${b.stepId}" cannot run: "${b.dependency}" ended ${b.dependencyStatus}`,
        {
          data: { stepId: b.stepId, dependency: b.dependency, dependencyStatus: b.dependencyStatus },
        },
      ),
    );
    ctx
      .stmt(
        "UPDATE runs SET status = 'cancelled', wait_reason = NULL, error = ?, finished_at = ?, updated_at = ? WHERE id = ?",
      )
      .run(json(error), now, now, child.id);
    ctx.appendEvents(scope, [
      newEvent(child.id, 'run:cancelled', { reason: error.message }),
      newEvent(flowId, 'flow:step_blocked', b),
    ]);
  }
  for (const stepId of decision.ready) {
    const child = byStep.get(stepId);
    if (!child) continue;
    ctx
      .stmt(
        "UPDATE runs SET status = 'queued', wait_reason = NULL, updated_at = ? WHERE id = ? AND status = 'waiting'",
      )
      .run(now, child.id);
    ctx.appendEvents(scope, [newEvent(child.id, 'run:queued', { reason: 'dependencies_met' })]);
  }
  // The protocol's tracked timeout state, kept current on the flow as each step ends.
  const timeoutState = flowTimeoutState(children);
  if (!decision.finished) {
    ctx
      .stmt('UPDATE runs SET meta = ?, updated_at = ? WHERE id = ?')
      .run(json({ ...flow.meta, timeout_state: timeoutState }), now, flowId);
    return;
  }
  const { status, incomplete } = decision.finished;
  const outputs: Record<string, unknown> = {};
  for (const c of children) if (c.output !== undefined) outputs[c.stepId ?? c.id] = c.output;
  const outputStep = typeof flow.options.outputStep === 'string' ? flow.options.outputStep : undefined;
  const output = outputStep ? outputs[outputStep] : outputs;
  const firstError = children.find((c) => c.status === 'failed')?.error ?? null;
  const ttl = typeof flow.options.ttlMs === 'number' ? flow.options.ttlMs : ctx.defaultTtlMs;
  ctx
    .stmt(
      'UPDATE runs SET status = ?, wait_reason = NULL, output = ?, error = ?, finished_at = ?, expires_at = ?, meta = ?, updated_at = ? WHERE id = ?',
    )
    .run(
      status,
      json(output),
      firstError ? json(firstError) : null,
      now,
      now + ttl,
      json({ ...flow.meta, incomplete, timeout_state: timeoutState }),
      now,
      flowId,
    );
  const durationMs = now - (flow.startedAt ?? flow.createdAt);
  const event: NewEvent =
    status === 'succeeded'
      ? newEvent(flowId, 'run:succeeded', { durationMs })
      : status === 'partial'
        ? newEvent(flowId, 'run:partial', { durationMs, incomplete })
        : status === 'failed'
          ? newEvent(flowId, 'run:failed', {
              error: firstError ?? serializeError(new BatonError('TASK_FAILED', 'a step failed')),
            })
          : newEvent(flowId, 'run:cancelled', { reason: 'a step was cancelled' });
  ctx.appendEvents(scope, [event]);
  if (flow.parentId) advanceFlow(ctx, scope, flow.parentId);
}
