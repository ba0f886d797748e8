/** Creating runs and moving them through the state machine, flows advancing in the same transaction. */
import { BatonError, type BatonEvent, type NewEvent } from '../../core/index.ts';
import type { Effects, Fence, NewRun, RunRecord } from '../records.ts';
import { json, type RunRow, toRun } from '../rows.ts';
import { type EncodedPatch, encodePatch, planTransition, runNotFound } from '../run-rules.ts';
import type { RunPatch, TransitionGuard } from '../store.ts';
import { writeEffects } from './deliveries.ts';
import { advanceFlow, applyUpdate, cancelOpenSteps, lockRoots, lockRunTree } from './flow-writes.ts';
import type { PgContext } from './pg-context.ts';
import { sqlState, UNIQUE_VIOLATION } from './sql.ts';
import type { Tx } from './write-queue.ts';

export function createRuns(
  ctx: PgContext,
  runs: readonly NewRun[],
  events: readonly NewEvent[],
  effects?: Effects,
): Promise<void> {
  // Serialize outside the transaction: a value that is not JSON fails here, before anything is written.
  const cols = {
    id: runs.map((r) => r.id),
    parent: runs.map((r) => r.parentId ?? null),
    root: runs.map((r) => r.rootId ?? r.id),
    step: runs.map((r) => r.stepId ?? null),
    kind: runs.map((r) => r.kind),
    name: runs.map((r) => r.name),
    input: runs.map((r) => json(r.input)),
    status: runs.map((r) => r.status),
    waitReason: runs.map((r) => r.waitReason ?? null),
    wakeAt: runs.map((r) => r.wakeAt ?? null),
    dependsOn: runs.map((r) => json(r.dependsOn ?? [])),
    priority: runs.map((r) => r.priority ?? 0),
    budget: runs.map((r) => r.budgetMs ?? null),
    source: runs.map((r) => r.source ?? null),
    options: runs.map((r) => json(r.options ?? {})),
    meta: runs.map((r) => json(r.meta ?? {})),
  };
  return ctx.write(async (tx) => {
    const now = ctx.now();
    if (runs.length > 0) {
      try {
        // One statement for the batch; WITH ORDINALITY keeps the given order for created_seq.
        await tx.execute(
          `INSERT INTO ${ctx.t.runs} (id, parent_id, root_id, step_id, kind, name, input, status, wait_reason,
             wake_at, depends_on, priority, budget_ms, source, options, meta, created_at, updated_at, started_at)
           SELECT id, parent_id, root_id, step_id, kind, name, input, status, wait_reason, wake_at, depends_on,
             priority, budget_ms, source, options, meta, $17::bigint, $17::bigint,
             -- Flows are never claimed; they start when they are created.
             CASE WHEN status = 'running' THEN $17::bigint END
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
             $8::text[], $9::text[], $10::bigint[], $11::text[], $12::integer[], $13::bigint[], $14::text[],
             $15::text[], $16::text[])
             WITH ORDINALITY AS r(id, parent_id, root_id, step_id, kind, name, input, status, wait_reason, wake_at,
               depends_on, priority, budget_ms, source, options, meta, n)
           ORDER BY n`,
          [...Object.values(cols), now],
        );
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION) {
          const id =
            /\(id\)=\((.*)\)/.exec((err as { detail?: string }).detail ?? '')?.[1] ?? cols.id.join(', ');
          throw new BatonError('RUN_CONFLICT', `a run with id ${id} already exists`, {
            cause: err,
            data: { runId: id },
          });
        }
        throw err;
      }
    }
    runs.forEach((r, i) => {
      tx.scope.roots.set(r.id, cols.root[i] as string);
    });
    await ctx.appendEvents(tx, events);
    await writeEffects(ctx, tx, effects);
  });
}

export function transition(
  ctx: PgContext,
  runId: string,
  patch: RunPatch,
  events: readonly NewEvent[],
  guard: TransitionGuard = {},
  effects?: Effects,
): Promise<RunRecord> {
  const encoded = encodePatch(patch);
  return ctx.write(async (tx) => {
    const run = await transitionIn(ctx, tx, runId, patch, encoded, events, guard);
    await writeEffects(ctx, tx, effects);
    return run;
  });
}

export function transitionAll(
  ctx: PgContext,
  changes: ReadonlyArray<{
    runId: string;
    patch: RunPatch;
    events: readonly NewEvent[];
    guard?: TransitionGuard;
    effects?: Effects;
  }>,
): Promise<RunRecord[]> {
  const encoded = changes.map((c) => encodePatch(c.patch));
  return ctx.write(async (tx) => {
    // Every tree this touches is locked up front, in id order, so two such writes cannot deadlock.
    if (changes.length > 1) await lockRoots(ctx, tx, [...new Set(changes.map((c) => c.runId))]);
    const out: RunRecord[] = [];
    for (const [i, c] of changes.entries()) {
      out.push(
        await transitionIn(ctx, tx, c.runId, c.patch, encoded[i] as EncodedPatch, c.events, c.guard ?? {}),
      );
      await writeEffects(ctx, tx, c.effects);
    }
    return out;
  });
}

async function transitionIn(
  ctx: PgContext,
  tx: Tx,
  runId: string,
  patch: RunPatch,
  encoded: EncodedPatch,
  events: readonly NewEvent[],
  guard: TransitionGuard,
): Promise<RunRecord> {
  // Locks the run's root first, then the run: every write that can advance a flow holds its root.
  const locked = await lockRunTree(ctx, tx, runId);
  const plan = planTransition(locked?.run, runId, patch, encoded, guard, ctx.now());
  if ((await applyUpdate(ctx, tx, plan.update)) !== 1) throw runNotFound(runId);
  await ctx.appendEvents(tx, events);
  // No child in the committed state the lock statement read: nothing to cancel (the recursive search
  // would read the same state a moment later; a child another process inserts meanwhile is missed by both).
  if (plan.cancelSteps && locked?.hasChildren) await cancelOpenSteps(ctx, tx, runId, plan.record.status);
  if (plan.advance) await advanceFlow(ctx, tx, plan.advance);
  // A flow's own row only changes through its steps when it ended; read it back in that case.
  if (!plan.reread) return plan.record;
  const [row] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [runId]);
  if (!row) throw runNotFound(runId);
  return toRun(row);
}

/** Events alone (fenced when an attempt writes them); resolves with their ids once committed. */
export function appendEvents(
  ctx: PgContext,
  events: readonly NewEvent[],
  fence?: Fence,
): Promise<BatonEvent[]> {
  return ctx.write(async (tx) => {
    if (fence) await ctx.checkFence(tx, fence);
    await ctx.appendEvents(tx, events);
    // Filled with ids when the batch commits, before this write resolves.
    return tx.scope.appended;
  });
}
