/** Signals (mirrors sqlite/signals.ts): stored until a ctx.waitFor reads them, each read once. */
import { BatonError, isTerminal, type NewEvent } from '../../core/index.ts';
import type { Effects, Fence, NewSignal, SignalRecord } from '../records.ts';
import { json, type SignalRow, toSignal } from '../rows.ts';
import { runNotFound } from '../run-rules.ts';
import { writeEffects } from './deliveries.ts';
import { lockRun } from './flow-writes.ts';
import type { PgContext } from './pg-context.ts';

export function addSignal(
  ctx: PgContext,
  signal: NewSignal,
  events: readonly NewEvent[],
  effects?: Effects,
): Promise<SignalRecord> {
  const payload = json(signal.payload);
  return ctx.write(async (tx) => {
    const run = await lockRun(ctx, tx, signal.runId);
    if (!run) throw runNotFound(signal.runId);
    if (isTerminal(run.status))
      throw new BatonError('RUN_CONFLICT', `run ${run.id} is ${run.status}; it takes no more signals`, {
        data: { runId: run.id, status: run.status },
      });
    const [row] = await tx.select<SignalRow>(
      `INSERT INTO ${ctx.t.signals} (id, run_id, name, payload, created_at)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [signal.id, signal.runId, signal.name, payload, ctx.now()],
    );
    await ctx.appendEvents(tx, events);
    await writeEffects(ctx, tx, effects);
    return toSignal(row as SignalRow);
  });
}

export function readSignal(
  ctx: PgContext,
  fence: Fence,
  name: string,
  step: { key: string; attempt: number; version: number },
  events: readonly NewEvent[],
): Promise<SignalRecord | undefined> {
  return ctx.write(async (tx) => {
    await ctx.checkFence(tx, fence);
    const now = ctx.now();
    const table = ctx.t.signals;
    const [row] = await tx.select<SignalRow>(
      `UPDATE ${table} SET read_at = $1, read_key = $2 WHERE seq = (
         SELECT seq FROM ${table} WHERE run_id = $3 AND name = $4 AND read_at IS NULL ORDER BY seq LIMIT 1
         FOR UPDATE)
       RETURNING *`,
      [now, step.key, fence.runId, name],
    );
    if (!row) return undefined;
    const signal = toSignal(row);
    await tx.execute(
      `INSERT INTO ${ctx.t.steps} (run_id, key, attempt, output, version, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        fence.runId,
        step.key,
        step.attempt,
        json({ signal: { id: signal.id, payload: signal.payload, sentAt: signal.createdAt } }),
        step.version,
        now,
      ],
    );
    await ctx.appendEvents(tx, events);
    return signal;
  });
}

export async function listSignals(
  ctx: PgContext,
  runId: string,
  filter: { name?: string; unread?: boolean } = {},
): Promise<SignalRecord[]> {
  const rows = await ctx.read<SignalRow>(
    `SELECT * FROM ${ctx.t.signals} WHERE run_id = $1 AND ($2::text IS NULL OR name = $2)
       AND ($3::boolean = false OR read_at IS NULL) ORDER BY seq`,
    [runId, filter.name ?? null, filter.unread === true],
  );
  return rows.map(toSignal);
}
