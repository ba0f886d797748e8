/** Creating runs and moving them through the state machine, flows advancing in the same transaction. */
import { BatonError, type BatonEvent, type NewEvent } from '../../core/index.ts';
import type { Effects, Fence, NewRun, RunRecord } from '../records.ts';
import { type RunRow, toRun } from '../rows.ts';
import { type EncodedPatch, encodePatch, leaseLost, planTransition, runNotFound } from '../run-rules.ts';
import type { RunPatch, TransitionGuard } from '../store.ts';
import { writeEffects } from './deliveries.ts';
import { advanceFlow, applyUpdate, cancelOpenSteps, lockRoots, lockRunTree } from './flow-writes.ts';
import { createRow, createRunsStatement } from './merged-writes.ts';
import type { PgContext } from './pg-context.ts';
import { sqlState, UNIQUE_VIOLATION } from './sql.ts';
import type { Tx } from './write-queue.ts';

export function createRuns(
  ctx: PgContext,
  runs: readonly NewRun[],
  events: readonly NewEvent[],
  effects?: Effects,
): Promise<void> {
  // Serialized outside the transaction: a value that is not JSON fails here, before anything is written.
  const rows = runs.map(createRow);
  const ids = runs.map((r) => r.id);
  // The new rows, and the parents that now have children.
  const footprint = [...ids, ...runs.flatMap((r) => (r.parentId ? [r.parentId] : []))];
  return ctx.write(async (tx) => {
    const now = ctx.now();
    if (runs.length > 0) {
      try {
        // One statement for the batch's new runs (merged-writes.ts), in the order given. A duplicate
        // id fails the batch's first try wherever it surfaces; the careful try, which sends it at
        // once, reports it here.
        await tx.laterRows(
          createRunsStatement(ctx.t),
          rows.map((row) => [...row, now]),
          footprint,
          footprint,
        );
      } catch (err) {
        if (sqlState(err) === UNIQUE_VIOLATION) {
          const id = /\(id\)=\((.*)\)/.exec((err as { detail?: string }).detail ?? '')?.[1] ?? ids.join(', ');
          throw new BatonError('RUN_CONFLICT', `a run with id ${id} already exists`, {
            cause: err,
            data: { runId: id },
          });
        }
        throw err;
      }
    }
    runs.forEach((r) => {
      tx.scope.roots.set(r.id, r.rootId ?? r.id);
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
  return ctx.write(
    async (tx) => {
      const run = await transitionIn(ctx, tx, runId, patch, encoded, events, guard);
      await writeEffects(ctx, tx, effects);
      return run;
    },
    [runId],
  );
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
  const ids = [...new Set(changes.map((c) => c.runId))];
  return ctx.write(async (tx) => {
    // Every tree this touches is locked up front, in id order, so two such writes cannot deadlock.
    if (changes.length > 1) await lockRoots(ctx, tx, ids);
    const out: RunRecord[] = [];
    for (const [i, c] of changes.entries()) {
      out.push(
        await transitionIn(ctx, tx, c.runId, c.patch, encoded[i] as EncodedPatch, c.events, c.guard ?? {}),
      );
      await writeEffects(ctx, tx, c.effects);
    }
    return out;
  }, ids);
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
  // The token can repeat after a crash lost a claim; the claim's name cannot (Fence.claim).
  if (guard.fence && locked && locked.leaseClaim !== (guard.fence.claim ?? null))
    throw leaseLost(runId, guard.fence.token, locked.run);
  const plan = planTransition(locked?.run, runId, patch, encoded, guard, ctx.now());
  // The row is locked: the update changes it (planTransition threw if it did not exist).
  await applyUpdate(ctx, tx, plan.update);
  await ctx.appendEvents(tx, events);
  // No child in the committed state the lock statement read: nothing to cancel (the recursive search
  // would read the same state a moment later; a child another process inserts meanwhile is missed by both).
  if (plan.cancelSteps && locked?.hasChildren) await cancelOpenSteps(ctx, tx, runId, plan.record.status);
  if (plan.advance) await advanceFlow(ctx, tx, plan.advance);
  // A flow's own row only changes through its steps when it ended; read it back in that case.
  if (!plan.reread) return plan.record;
  const [row] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [runId], 'none');
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
