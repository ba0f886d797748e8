/** Signals: stored for a run until a ctx.waitFor reads them, each read once with its step record. */
import { BatonError, isTerminal, type NewEvent } from '../../core/index.ts';
import type { Effects, Fence, NewSignal, SignalRecord } from '../records.ts';
import { json, type SignalRow, toSignal } from '../rows.ts';
import { runNotFound } from '../run-rules.ts';
import { writeEffects } from './deliveries.ts';
import { getRunSync } from './run-writes.ts';
import type { SqliteContext } from './sqlite-context.ts';

export function addSignal(
  ctx: SqliteContext,
  signal: NewSignal,
  events: readonly NewEvent[],
  effects?: Effects,
): Promise<SignalRecord> {
  const payload = json(signal.payload);
  return ctx.write((scope) => {
    const run = getRunSync(ctx, signal.runId);
    if (!run) throw runNotFound(signal.runId);
    if (isTerminal(run.status))
      throw new BatonError('RUN_CONFLICT', `run ${run.id} is ${run.status}; it takes no more signals`, {
        data: { runId: run.id, status: run.status },
      });
    const row = ctx
      .stmt('INSERT INTO signals (id, run_id, name, payload, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *')
      .get(signal.id, signal.runId, signal.name, payload, ctx.now()) as SignalRow;
    ctx.appendEvents(scope, events);
    writeEffects(ctx, effects);
    return toSignal(row);
  });
}

export function readSignal(
  ctx: SqliteContext,
  fence: Fence,
  name: string,
  step: { key: string; attempt: number; version: number },
  events: readonly NewEvent[],
): Promise<SignalRecord | undefined> {
  return ctx.write((scope) => {
    ctx.checkFence(fence);
    const now = ctx.now();
    const row = ctx
      .stmt(
        `UPDATE signals SET read_at = ?, read_key = ? WHERE seq = (
           SELECT seq FROM signals WHERE run_id = ? AND name = ? AND read_at IS NULL ORDER BY seq LIMIT 1)
         RETURNING *`,
      )
      .get(now, step.key, fence.runId, name) as SignalRow | undefined;
    if (!row) return undefined;
    const signal = toSignal(row);
    ctx
      .stmt('INSERT INTO steps (run_id, key, attempt, output, version, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(
        fence.runId,
        step.key,
        step.attempt,
        json({ signal: { id: signal.id, payload: signal.payload, sentAt: signal.createdAt } }),
        step.version,
        now,
      );
    ctx.appendEvents(scope, events);
    return signal;
  });
}

export function listSignals(
  ctx: SqliteContext,
  runId: string,
  filter: { name?: string; unread?: boolean } = {},
): Promise<SignalRecord[]> {
  const rows = ctx
    .stmt(
      `SELECT * FROM signals WHERE run_id = ? AND (? IS NULL OR name = ?) AND (? = 0 OR read_at IS NULL) ORDER BY seq`,
    )
    .all(runId, filter.name ?? null, filter.name ?? null, filter.unread ? 1 : 0) as SignalRow[];
  return Promise.resolve(rows.map(toSignal));
}
