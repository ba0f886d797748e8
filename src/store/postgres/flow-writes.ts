/**
 * Flows advancing inside the transaction that ended one of their steps, and the lock order that
 * makes that safe with many writers. Two steps of one flow ending at once in two processes must not
 * both decide from a view where the other is still running (the flow would never finish), so every
 * transition first locks the root of its run's tree: transitions within one tree take turns, and
 * each reads its siblings after the previous one committed. Locks go root first, then the run, then
 * (for a flow) its steps in id order; writes that lock several runs outside a tree (heartbeats,
 * lease recovery) also take them in id order.
 */
import {
  BatonError,
  decideFlow,
  flowTimeoutState,
  isTerminal,
  type NewEvent,
  newEvent,
  type RunStatus,
  serializeError,
} from '../../core/index.ts';
import type { RunRecord } from '../records.ts';
import { json, type RunRow, toRun } from '../sqlite/rows.ts';
import type { PgContext } from './pg-context.ts';
import type { Tx } from './write-queue.ts';

/** Locks the run's root, then the run; returns the run as locked, or undefined if it does not exist. */
export async function lockRun(ctx: PgContext, tx: Tx, runId: string): Promise<RunRecord | undefined> {
  const cached = ctx.cachedRoot(runId);
  const [root] = await tx.select<RunRow>(
    cached === undefined
      ? `SELECT * FROM ${ctx.t.runs} WHERE id = (SELECT root_id FROM ${ctx.t.runs} WHERE id = $1) FOR UPDATE`
      : `SELECT * FROM ${ctx.t.runs} WHERE id = $1 FOR UPDATE`,
    [cached ?? runId],
  );
  if (root?.id === runId) return toRun(root);
  // A root that does not exist (the run was created with a rootId of its own choosing) locks nothing.
  if (root) ctx.rememberRoot(runId, root.id);
  const [row] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1 FOR UPDATE`, [runId]);
  return row ? toRun(row) : undefined;
}

/** Locks the roots of these runs in id order (before a write that transitions several of them). */
export async function lockRoots(ctx: PgContext, tx: Tx, runIds: readonly string[]): Promise<void> {
  await tx.select(
    `SELECT id FROM ${ctx.t.runs} WHERE id IN (SELECT root_id FROM ${ctx.t.runs} WHERE id = ANY($1::text[]))
     ORDER BY id FOR UPDATE`,
    [runIds],
  );
}

/** A flow that ends (cancelled, expired, failed by a decision) takes its unfinished steps with it. */
export async function cancelOpenSteps(ctx: PgContext, tx: Tx, flowId: string, flowStatus: RunStatus) {
  const open = await tx.select<{ id: string }>(
    `SELECT id FROM ${ctx.t.runs} WHERE parent_id = $1 AND status IN ('queued', 'running', 'waiting')
     ORDER BY id FOR UPDATE`,
    [flowId],
  );
  if (open.length === 0) return;
  const now = ctx.now();
  const ids = open.map((r) => r.id);
  await tx.execute(
    `UPDATE ${ctx.t.runs} SET status = 'cancelled', wait_reason = NULL, wake_at = NULL, lease_owner = NULL,
       lease_expires_at = NULL, finished_at = $1, updated_at = $1 WHERE id = ANY($2::text[])`,
    [now, ids],
  );
  await ctx.appendEvents(
    tx,
    ids.map((id) => newEvent(id, 'run:cancelled', { reason: `its flow ${flowId} ended ${flowStatus}` })),
  );
}

export async function advanceFlow(ctx: PgContext, tx: Tx, flowId: string): Promise<void> {
  const [flowRow] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [flowId]);
  const flow = flowRow ? toRun(flowRow) : undefined;
  if (!flow || isTerminal(flow.status)) return;
  // In creation order, as SQLite reads them (rowid order): the flow's output lists steps that way.
  const children = (
    await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE parent_id = $1 ORDER BY created_seq`, [flowId])
  ).map(toRun);
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
    await tx.execute(
      `UPDATE ${ctx.t.runs} SET status = 'cancelled', wait_reason = NULL, error = $1, finished_at = $2,
         updated_at = $2 WHERE id = $3`,
      [json(error), now, child.id],
    );
    await ctx.appendEvents(tx, [
      newEvent(child.id, 'run:cancelled', { reason: error.message }),
      newEvent(flowId, 'flow:step_blocked', b),
    ]);
  }
  for (const stepId of decision.ready) {
    const child = byStep.get(stepId);
    if (!child) continue;
    await tx.execute(
      `UPDATE ${ctx.t.runs} SET status = 'queued', wait_reason = NULL, updated_at = $1
       WHERE id = $2 AND status = 'waiting'`,
      [now, child.id],
    );
    await ctx.appendEvents(tx, [newEvent(child.id, 'run:queued', { reason: 'dependencies_met' })]);
  }
  // The protocol's tracked timeout state, kept current on the flow as each step ends.
  const timeoutState = flowTimeoutState(children);
  if (!decision.finished) {
    await tx.execute(`UPDATE ${ctx.t.runs} SET meta = $1, updated_at = $2 WHERE id = $3`, [
      json({ ...flow.meta, timeout_state: timeoutState }),
      now,
      flowId,
    ]);
    return;
  }
  await finishFlow(ctx, tx, flow, children, decision.finished, timeoutState, now);
}

async function finishFlow(
  ctx: PgContext,
  tx: Tx,
  flow: RunRecord,
  children: readonly RunRecord[],
  finished: { status: RunStatus; incomplete: string[] },
  timeoutState: unknown,
  now: number,
): Promise<void> {
  const { status, incomplete } = finished;
  const outputs: Record<string, unknown> = {};
  for (const c of children) if (c.output !== undefined) outputs[c.stepId ?? c.id] = c.output;
  const outputStep = typeof flow.options.outputStep === 'string' ? flow.options.outputStep : undefined;
  const output = outputStep ? outputs[outputStep] : outputs;
  const firstError = children.find((c) => c.status === 'failed')?.error ?? null;
  const ttl = typeof flow.options.ttlMs === 'number' ? flow.options.ttlMs : ctx.defaultTtlMs;
  await tx.execute(
    `UPDATE ${ctx.t.runs} SET status = $1, wait_reason = NULL, output = $2, error = $3, finished_at = $4,
       expires_at = $5, meta = $6, updated_at = $4 WHERE id = $7`,
    [
      status,
      json(output),
      firstError ? json(firstError) : null,
      now,
      now + ttl,
      json({ ...flow.meta, incomplete, timeout_state: timeoutState }),
      flow.id,
    ],
  );
  const durationMs = now - (flow.startedAt ?? flow.createdAt);
  const event: NewEvent =
    status === 'succeeded'
      ? newEvent(flow.id, 'run:succeeded', { durationMs })
      : status === 'partial'
        ? newEvent(flow.id, 'run:partial', { durationMs, incomplete })
        : status === 'failed'
          ? newEvent(flow.id, 'run:failed', {
              error: firstError ?? serializeError(new BatonError('TASK_FAILED', 'a step failed')),
            })
          : newEvent(flow.id, 'run:cancelled', { reason: 'a step was cancelled' });
  await ctx.appendEvents(tx, [event]);
  if (flow.parentId) await advanceFlow(ctx, tx, flow.parentId);
}
