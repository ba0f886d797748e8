/** What a running attempt writes: memoized steps, checkpoints and partial findings, all fenced. */
import { BatonError, type NewEvent } from '../../core/index.ts';
import type { Fence, PartialRecord, StepRecord, StoredCheckpoint } from '../records.ts';
import { json, toCheckpoint, toPartial, toStep } from '../rows.ts';
import { BatchedReads } from './batched-reads.ts';
import type { PgContext } from './pg-context.ts';

export function recordStep(
  ctx: PgContext,
  fence: Fence,
  step: Omit<StepRecord, 'runId' | 'createdAt'>,
  events: readonly NewEvent[],
): Promise<void> {
  const output = json(step.output);
  return ctx.write(async (tx) => {
    await ctx.checkFence(tx, fence);
    const inserted = await tx.execute(
      `INSERT INTO ${ctx.t.steps} (run_id, key, attempt, output, version, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [fence.runId, step.key, step.attempt, output, step.version, ctx.now()],
    );
    if (inserted === 0)
      throw new BatonError('RUN_CONFLICT', `step "${step.key}" of run ${fence.runId} is already recorded`, {
        data: { runId: fence.runId, key: step.key },
      });
    await ctx.appendEvents(tx, events);
  });
}

/** What every attempt reads first, batched per store (batched-reads.ts). */
interface AttemptReads {
  steps: BatchedReads<StepRecord[]>;
  lastCheckpoint: BatchedReads<StoredCheckpoint | undefined>;
}

const attemptReads = new WeakMap<PgContext, AttemptReads>();

function readsOf(ctx: PgContext): AttemptReads {
  let reads = attemptReads.get(ctx);
  if (reads) return reads;
  reads = {
    steps: new BatchedReads(
      async (ids) => {
        const rows = await ctx.read<Parameters<typeof toStep>[0]>(
          `SELECT * FROM ${ctx.t.steps} WHERE run_id = ANY($1::text[]) ORDER BY run_id, created_at, key`,
          [ids],
        );
        const byRun = new Map<string, StepRecord[]>();
        for (const row of rows) {
          const step = toStep(row);
          const list = byRun.get(step.runId);
          if (list) list.push(step);
          else byRun.set(step.runId, [step]);
        }
        return byRun;
      },
      () => [],
    ),
    lastCheckpoint: new BatchedReads(
      async (ids) => {
        const rows = await ctx.read<Parameters<typeof toCheckpoint>[0]>(
          `SELECT DISTINCT ON (run_id) * FROM ${ctx.t.checkpoints} WHERE run_id = ANY($1::text[])
         ORDER BY run_id, seq DESC`,
          [ids],
        );
        return new Map(rows.map((row) => [row.run_id, toCheckpoint(row)]));
      },
      () => undefined,
    ),
  };
  attemptReads.set(ctx, reads);
  return reads;
}

export function getSteps(ctx: PgContext, runId: string): Promise<StepRecord[]> {
  return readsOf(ctx).steps.get(runId);
}

// The fence check locks the run's row until COMMIT, so no other write of this run can compute the
// same next sequence number meanwhile.
export function saveCheckpoint(
  ctx: PgContext,
  fence: Fence,
  cp: Omit<StoredCheckpoint, 'runId' | 'seq' | 'createdAt'>,
  events: readonly NewEvent[],
): Promise<number> {
  const state = json(cp.state);
  const record = json(cp.record);
  return ctx.write(async (tx) => {
    await ctx.checkFence(tx, fence);
    const [row] = await tx.select<{ seq: number }>(
      `INSERT INTO ${ctx.t.checkpoints} (run_id, seq, attempt, state, record, version, created_at)
       VALUES ($1, (SELECT coalesce(max(seq), 0) + 1 FROM ${ctx.t.checkpoints} WHERE run_id = $1), $2, $3, $4,
               $5, $6) RETURNING seq`,
      [fence.runId, cp.attempt, state, record, cp.version, ctx.now()],
    );
    const seq = (row as { seq: number }).seq;
    // Events may refer to the new sequence number; the runtime passes a placeholder of 0.
    await ctx.appendEvents(
      tx,
      events.map((e) =>
        e.type === 'checkpoint:saved' ? { ...e, data: { ...(e.data as object), seq } as typeof e.data } : e,
      ),
    );
    return seq;
  });
}

const CHECKPOINT_ROW = (table: string) => `SELECT * FROM ${table} WHERE run_id = $1`;

export function getLastCheckpoint(ctx: PgContext, runId: string): Promise<StoredCheckpoint | undefined> {
  return readsOf(ctx).lastCheckpoint.get(runId);
}

export async function listCheckpoints(ctx: PgContext, runId: string): Promise<StoredCheckpoint[]> {
  const rows = await ctx.read(`${CHECKPOINT_ROW(ctx.t.checkpoints)} ORDER BY seq`, [runId]);
  return (rows as Parameters<typeof toCheckpoint>[0][]).map(toCheckpoint);
}

export function addPartial(
  ctx: PgContext,
  fence: Fence,
  attempt: number,
  findings: readonly unknown[],
  events: readonly NewEvent[],
): Promise<number> {
  const body = json(findings);
  return ctx.write(async (tx) => {
    await ctx.checkFence(tx, fence);
    const [row] = await tx.select<{ seq: number }>(
      `INSERT INTO ${ctx.t.partials} (run_id, seq, attempt, findings, created_at)
       VALUES ($1, (SELECT coalesce(max(seq), 0) + 1 FROM ${ctx.t.partials} WHERE run_id = $1), $2, $3, $4)
       RETURNING seq`,
      [fence.runId, attempt, body, ctx.now()],
    );
    await ctx.appendEvents(tx, events);
    return (row as { seq: number }).seq;
  });
}

export async function listPartials(ctx: PgContext, runId: string): Promise<PartialRecord[]> {
  const rows = await ctx.read(`SELECT * FROM ${ctx.t.partials} WHERE run_id = $1 ORDER BY seq`, [runId]);
  return (rows as Parameters<typeof toPartial>[0][]).map(toPartial);
}
