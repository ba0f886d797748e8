/** Creating runs and moving them through the state machine, flows advancing in the same transaction. */
import { BatonError, type NewEvent } from '../../core/index.ts';
import { DIALECTS, renderRunUpdate } from '../dialect.ts';
import type { Effects, NewRun, RunRecord } from '../records.ts';
import { json, type RunRow, toRun } from '../rows.ts';
import {
  type EncodedPatch,
  encodePatch,
  OPEN_STATUSES,
  planAdvance,
  planCancelOpenSteps,
  planTransition,
  type RunUpdate,
  type RunWrites,
  runNotFound,
} from '../run-rules.ts';
import type { RunPatch, TransitionGuard } from '../store.ts';
import { writeEffects } from './deliveries.ts';
import { RUN_COLUMN_COUNT, RUN_COLUMNS, runRowOf } from './run-row.ts';
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
  // Their events need not read the roots back.
  const roots = new Map(runs.map((r) => [r.id, r.rootId ?? r.id]));
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
    ctx.appendEvents(scope, events, roots);
    writeEffects(ctx, effects);
  });
}

export function getRunSync(ctx: SqliteContext, id: string): RunRecord | undefined {
  const values = ctx.rawStmt(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`).get(id) as unknown[] | undefined;
  return values ? toRun(runRowOf(values)) : undefined;
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

/** Applies updates planned by the shared rules, in this store's dialect. */
function apply(ctx: SqliteContext, update: RunUpdate): number {
  const { text, values } = renderRunUpdate('sqlite', 'runs', update);
  return ctx.stmt(text).run(...values).changes;
}

function applyAll(ctx: SqliteContext, scope: WriteScope, writes: RunWrites): void {
  for (const u of writes.updates) apply(ctx, u);
  ctx.appendEvents(scope, writes.events);
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
  // Whether the run has children comes with its row: most runs have none, and then ending one skips
  // the search for open descendants.
  const values = ctx
    .rawStmt(
      `SELECT ${RUN_COLUMNS}, EXISTS (SELECT 1 FROM runs c WHERE c.parent_id = runs.id) AS has_children FROM runs WHERE id = ?`,
    )
    .get(runId) as unknown[] | undefined;
  const plan = planTransition(values && toRun(runRowOf(values)), runId, patch, encoded, guard, ctx.now());
  const hasChildren = values?.[RUN_COLUMN_COUNT] === 1;
  if (apply(ctx, plan.update) !== 1) throw runNotFound(runId);
  ctx.appendEvents(scope, events);
  if (plan.cancelSteps && hasChildren) {
    const open = ctx
      .stmt(
        // Every open descendant: a flow's steps, and the children tasks started with ctx.invoke at any depth.
        `WITH RECURSIVE tree(id) AS (SELECT id FROM runs WHERE parent_id = ?
           UNION ALL SELECT r.id FROM runs r JOIN tree ON r.parent_id = tree.id)
         SELECT id FROM runs WHERE id IN (SELECT id FROM tree) AND status IN (${OPEN_STATUSES.map(() => '?').join(', ')})`,
      )
      .all(runId, ...OPEN_STATUSES) as Array<{ id: string }>;
    applyAll(
      ctx,
      scope,
      planCancelOpenSteps(
        runId,
        plan.record.status,
        open.map((r) => r.id),
        ctx.now(),
      ),
    );
  }
  if (plan.advance) advanceFlow(ctx, scope, plan.advance);
  // A flow's own row only changes through its steps when it ended; read it back in that case.
  if (!plan.reread) return plan.record;
  const run = getRunSync(ctx, runId);
  if (!run) throw runNotFound(runId);
  return run;
}

function advanceFlow(ctx: SqliteContext, scope: WriteScope, flowId: string): void {
  const flow = getRunSync(ctx, flowId);
  if (!flow) return;
  const children = (
    ctx
      .stmt(`SELECT * FROM runs WHERE parent_id = ? ORDER BY ${DIALECTS.sqlite.creationOrder}`)
      .all(flowId) as RunRow[]
  ).map(toRun);
  const plan = planAdvance(flow, children, ctx.now(), ctx.defaultTtlMs);
  applyAll(ctx, scope, plan);
  if (plan.finished && flow.parentId) advanceFlow(ctx, scope, flow.parentId);
}
