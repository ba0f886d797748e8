/**
 * Flows advancing inside the transaction that ended one of their steps, and the lock order that
 * makes that safe with many writers. Two steps of one flow ending at once in two processes must not
 * both decide from a view where the other is still running (the flow would never finish), so every
 * transition first locks the root of its run's tree: transitions within one tree take turns, and
 * each reads its siblings after the previous one committed. Locks go root first, then the run, then
 * (for a flow) its steps in id order; writes that lock several runs outside a tree (heartbeats,
 * lease recovery) also take them in id order.
 */
import type { RunStatus } from '../../core/index.ts';
import { DIALECTS, renderRunUpdate } from '../dialect.ts';
import type { RunRecord } from '../records.ts';
import { type RunRow, toRun } from '../rows.ts';
import {
  OPEN_STATUSES,
  planAdvance,
  planCancelOpenSteps,
  type RunUpdate,
  type RunWrites,
} from '../run-rules.ts';
import type { LockedRun } from './batch-conn.ts';
import { runUpdateRow } from './merged-writes.ts';
import type { PgContext } from './pg-context.ts';
import { RUN_WIDTH, runColumns, runFromArray } from './run-columns.ts';
import type { Tx } from './write-queue.ts';

/** Locks the run's root, then the run; returns the run as locked, or undefined if it does not exist. */
export async function lockRun(ctx: PgContext, tx: Tx, runId: string): Promise<RunRecord | undefined> {
  return (await lockRunTree(ctx, tx, runId))?.run;
}

/**
 * lockRun, also telling whether the run has children: most runs have none, and knowing it from the
 * same round trip spares the recursive search for open descendants when one ends.
 *
 * In a batch's first try, the first transition to lock also locks the runs that the batch's later
 * transitions will (roots first, then runs, each in id order), in one statement: a batch of ended
 * runs then takes one round trip to lock them all instead of one each. A later transition uses the
 * row as locked then, unless a statement of the batch may have changed it since (batch-conn.ts).
 */
export async function lockRunTree(ctx: PgContext, tx: Tx, runId: string): Promise<LockedRun | undefined> {
  const known = tx.batch.locked(runId);
  if (known) return known;
  if (tx.fast) {
    const upcoming = tx.batch.upcomingLocks().filter((id) => id !== runId && !tx.batch.locked(id));
    if (upcoming.length > 0) {
      await lockMany(ctx, tx, [runId, ...new Set(upcoming)]);
      const locked = tx.batch.locked(runId);
      if (locked) return locked;
    }
  }
  const cached = ctx.cachedRoot(runId);
  const children = `EXISTS (SELECT 1 FROM ${ctx.t.runs} c WHERE c.parent_id = $2) AS has_children`;
  const [root] = await tx.select<RunRow & { has_children: boolean }>(
    cached === undefined
      ? `SELECT *, ${children} FROM ${ctx.t.runs}
         WHERE id = (SELECT root_id FROM ${ctx.t.runs} WHERE id = $1) FOR UPDATE`
      : `SELECT *, ${children} FROM ${ctx.t.runs} WHERE id = $1 FOR UPDATE`,
    [cached ?? runId, runId],
    'none',
  );
  if (root?.id === runId)
    return { run: toRun(root), hasChildren: root.has_children, leaseClaim: root.lease_claim ?? null };
  // A root that does not exist (the run was created with a rootId of its own choosing) locks nothing.
  if (root) ctx.rememberRoot(runId, root.id);
  const [row] = await tx.select<RunRow & { has_children: boolean }>(
    `SELECT *, ${children} FROM ${ctx.t.runs} WHERE id = $1 FOR UPDATE`,
    [runId, runId],
    'none',
  );
  return row
    ? { run: toRun(row), hasChildren: row.has_children, leaseClaim: row.lease_claim ?? null }
    : undefined;
}

/**
 * Locks these runs and their roots (roots first, then the runs, each in id order) and remembers them.
 * The ids and their roots are one array, so the primary key finds them: written as `id = ANY(…) OR
 * id IN (SELECT root_id …)` the OR hid the index from the planner, which read the whole table — and
 * then, expecting half of it back, every run's children too (`has_children`, hashed) — 2.6 ms a batch
 * with 10,000 runs stored, growing with the table (0.4 ms now, with any number).
 */
async function lockMany(ctx: PgContext, tx: Tx, runIds: readonly string[]): Promise<void> {
  // Rows as arrays (run-columns.ts): the runs, then has_children.
  const rows = await tx.selectArrays(
    `SELECT ${runColumns('r')}, EXISTS (SELECT 1 FROM ${ctx.t.runs} c WHERE c.parent_id = r.id) AS has_children
     FROM ${ctx.t.runs} r
     WHERE r.id = ANY($1::text[] || ARRAY(SELECT root_id FROM ${ctx.t.runs} WHERE id = ANY($1::text[])))
     ORDER BY r.root_id <> r.id, r.id FOR UPDATE OF r`,
    [runIds],
    'none',
  );
  for (const row of rows) {
    const { run, leaseClaim } = runFromArray(row);
    if (run.rootId !== run.id) ctx.rememberRoot(run.id, run.rootId);
    tx.batch.rememberLocked({ run, hasChildren: row[RUN_WIDTH] === true, leaseClaim });
  }
}

/** Locks the roots of these runs in id order (before a write that transitions several of them). */
export async function lockRoots(ctx: PgContext, tx: Tx, runIds: readonly string[]): Promise<void> {
  await tx.select(
    `SELECT id FROM ${ctx.t.runs} WHERE id IN (SELECT root_id FROM ${ctx.t.runs} WHERE id = ANY($1::text[]))
     ORDER BY id FOR UPDATE`,
    [runIds],
    'none',
  );
}

/** Applies one update planned by the shared rules, in this store's dialect (with the batch's next round trip). */
export function applyUpdate(ctx: PgContext, tx: Tx, update: RunUpdate): Promise<void> {
  if (update.ids.length === 1) {
    // One run: the row joins the batch's other updates of the same columns (merged-writes.ts).
    const { spec, row } = runUpdateRow(update);
    return tx.laterRows(spec(ctx.t), [row], update.ids, update.ids);
  }
  const { text, values } = renderRunUpdate('postgres', ctx.t.runs, update);
  return tx.later(text, values, update.ids);
}

async function applyAll(ctx: PgContext, tx: Tx, writes: RunWrites): Promise<void> {
  for (const u of writes.updates) await applyUpdate(ctx, tx, u);
  await ctx.appendEvents(tx, writes.events);
}

/** A flow that ends takes its unfinished steps with it (locked in id order). */
export async function cancelOpenSteps(ctx: PgContext, tx: Tx, flowId: string, flowStatus: RunStatus) {
  const open = await tx.select<{ id: string }>(
    // Every open descendant: a flow's steps, and the children tasks started with ctx.invoke at any depth.
    `WITH RECURSIVE tree(id) AS (SELECT id FROM ${ctx.t.runs} WHERE parent_id = $1
       UNION ALL SELECT r.id FROM ${ctx.t.runs} r JOIN tree ON r.parent_id = tree.id)
     SELECT id FROM ${ctx.t.runs} WHERE id IN (SELECT id FROM tree) AND status = ANY($2::text[]) ORDER BY id FOR UPDATE`,
    [flowId, OPEN_STATUSES],
    'none',
  );
  await applyAll(
    ctx,
    tx,
    planCancelOpenSteps(
      flowId,
      flowStatus,
      open.map((r) => r.id),
      ctx.now(),
    ),
  );
}

export async function advanceFlow(ctx: PgContext, tx: Tx, flowId: string): Promise<void> {
  const [flowRow] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [flowId], 'none');
  if (!flowRow) return;
  const flow = toRun(flowRow);
  const children = (
    await tx.select<RunRow>(
      `SELECT * FROM ${ctx.t.runs} WHERE parent_id = $1 ORDER BY ${DIALECTS.postgres.creationOrder}`,
      [flowId],
      'none',
    )
  ).map(toRun);
  const plan = planAdvance(flow, children, ctx.now(), ctx.defaultTtlMs);
  await applyAll(ctx, tx, plan);
  if (plan.finished && flow.parentId) await advanceFlow(ctx, tx, flow.parentId);
}
