/** Creating runs and moving them through the state machine, flows advancing in the same transaction. */
import { assertTransition, BatonError, isTerminal, type NewEvent } from '../../core/index.ts';
import type { Effects, NewRun, RunRecord } from '../records.ts';
import { json, type RunRow, toRun } from '../sqlite/rows.ts';
import type { RunPatch, TransitionGuard } from '../store.ts';
import { writeEffects } from './deliveries.ts';
import { advanceFlow, cancelOpenSteps, lockRoots, lockRun } from './flow-writes.ts';
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

export async function getRun(ctx: PgContext, id: string): Promise<RunRecord | undefined> {
  const [row] = await ctx.read<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [id]);
  return row ? toRun(row) : undefined;
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

interface EncodedPatch {
  sets: Array<[column: string, value: unknown]>;
  /** The patched fields as they read back from the row (JSON columns round-tripped). */
  fields: Partial<RunRecord>;
  resetAttempts: boolean;
}

function encodePatch(patch: RunPatch): EncodedPatch {
  const sets: EncodedPatch['sets'] = [];
  const fields: Partial<RunRecord> = {};
  const add = <K extends keyof RunRecord>(col: string, key: K, value: RunRecord[K]) => {
    sets.push([col, value]);
    fields[key] = value;
  };
  // JSON columns: stored as text, and read back as the text parses (what a reader would get).
  const addJson = <K extends keyof RunRecord>(col: string, key: K, value: unknown) => {
    const text = json(value);
    sets.push([col, text]);
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
  if (patch.resetAttempts) fields.attempt = 0;
  return { sets, fields, resetAttempts: patch.resetAttempts === true };
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
  const run = await lockRun(ctx, tx, runId);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${runId}`, { data: { runId } });
  const fence = guard.fence;
  if (fence && (run.status !== 'running' || run.leaseToken !== fence.token))
    throw new BatonError(
      'LEASE_LOST',
      `lease on run ${fence.runId} is no longer held (token ${fence.token}; the run is ${run.status} with token ${run.leaseToken}${run.leaseOwner ? ` held by ${run.leaseOwner}` : ''})`,
      { data: { runId: fence.runId, token: fence.token, currentToken: run.leaseToken, status: run.status } },
    );
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
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const sets = encoded.sets.map(([col, value]) => `${col} = ${param(value)}`);
  sets.push(`updated_at = ${param(now)}`);
  if (encoded.resetAttempts) sets.push('attempt = 0');
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
    sets.push(`meta = ${param(meta)}`);
    updated.meta = JSON.parse(meta) as Record<string, unknown>;
  }
  const changed = await tx.execute(
    `UPDATE ${ctx.t.runs} SET ${sets.join(', ')} WHERE id = ${param(runId)}`,
    values,
  );
  if (changed !== 1) throw new BatonError('RUN_NOT_FOUND', `run ${runId} does not exist`);
  await ctx.appendEvents(tx, events);
  if (to !== run.status && isTerminal(to)) {
    if (run.kind === 'flow') await cancelOpenSteps(ctx, tx, run.id, to);
    if (run.parentId) await advanceFlow(ctx, tx, run.parentId);
  } else if (run.parentId && to === 'waiting' && patch.waitReason === 'delivery') {
    // Finished executing, delivery held: its dependents may start now (see decideFlow).
    await advanceFlow(ctx, tx, run.parentId);
  }
  // A flow's own row only changes through its steps when its step ended; re-read it in that case.
  if (run.kind === 'flow' && to !== run.status && isTerminal(to)) {
    const [row] = await tx.select<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [runId]);
    if (row) return toRun(row);
  }
  return updated;
}
