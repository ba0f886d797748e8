/** Effects written with run changes (timers, deliveries), and the delivery queue of the Postgres store. */
import type { NewEvent } from '../../core/index.ts';
import type { DeliveryRecord, Effects } from '../records.ts';
import { type DeliveryRow, json, toDelivery } from '../rows.ts';
import type { DeliveryTake, Store } from '../store.ts';
import type { PgContext } from './pg-context.ts';
import type { Tx } from './write-queue.ts';

/** Writes a timer, replacing one with the same id (SQLite's INSERT OR REPLACE). */
export const UPSERT_TIMER = (table: string) =>
  `INSERT INTO ${table} (id, run_id, kind, due_at, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6)
   ON CONFLICT (id) DO UPDATE SET run_id = EXCLUDED.run_id, kind = EXCLUDED.kind, due_at = EXCLUDED.due_at,
     payload = EXCLUDED.payload, created_at = EXCLUDED.created_at, taken_until = NULL`;

/** Writes timers and deliveries inside the caller's transaction. Deliveries already queued are kept. */
export async function writeEffects(ctx: PgContext, tx: Tx, effects: Effects | undefined): Promise<void> {
  if (!effects) return;
  // Timers and deliveries other processes may act on: they get a wake-up hint after the commit.
  if (effects.timers?.length || effects.deliveries?.length) tx.scope.wake = true;
  const now = ctx.now();
  for (const t of effects.timers ?? [])
    await tx.execute(UPSERT_TIMER(ctx.t.timers), [
      t.id,
      t.runId,
      t.kind,
      t.dueAt,
      json(t.payload),
      t.createdAt,
    ]);
  if (effects.cancelTimers?.length)
    await tx.execute(`DELETE FROM ${ctx.t.timers} WHERE id = ANY($1::text[])`, [effects.cancelTimers]);
  for (const d of effects.deliveries ?? [])
    await tx.execute(
      `INSERT INTO ${ctx.t.deliveries} (id, run_id, kind, channel, route, target, payload, idempotency_key,
         status, attempts, next_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', 0, $9, $9) ON CONFLICT (idempotency_key) DO NOTHING`,
      [d.id, d.runId, d.kind, d.channel, d.route, json(d.target), json(d.payload), d.idempotencyKey, now],
    );
}

/** SKIP LOCKED: senders in other processes taking deliveries at the same moment get the others. */
export function takeDueDeliveries(ctx: PgContext, take: DeliveryTake): Promise<DeliveryRecord[]> {
  if (take.routes.length === 0 || take.limit <= 0) return Promise.resolve([]);
  return ctx.write(async (tx) => {
    const now = ctx.now();
    const rows = await tx.select<DeliveryRow>(
      `SELECT * FROM ${ctx.t.deliveries} WHERE status = 'pending' AND next_at <= $1 AND route = ANY($2::text[])
       ORDER BY next_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, [...take.routes], take.limit],
    );
    if (rows.length === 0) return [];
    const taken = rows.map((r) => {
      const attempts = Number(r.attempts) + 1;
      return toDelivery({ ...r, attempts, next_at: now + take.hideMs(r.route, attempts) });
    });
    await tx.execute(
      `UPDATE ${ctx.t.deliveries} d SET attempts = u.attempts, next_at = u.next_at
       FROM unnest($1::text[], $2::int[], $3::bigint[]) AS u(id, attempts, next_at) WHERE d.id = u.id`,
      [taken.map((d) => d.id), taken.map((d) => d.attempts), taken.map((d) => d.nextAt)],
    );
    return taken.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
}

export function settleDelivery(
  ctx: PgContext,
  id: string,
  outcome: Parameters<Store['settleDelivery']>[1],
  events: readonly NewEvent[] = [],
): Promise<void> {
  return ctx.write(async (tx) => {
    const now = ctx.now();
    if (events.length > 0) await ctx.appendEvents(tx, events);
    if (outcome.status === 'delivered')
      await tx.execute(
        `UPDATE ${ctx.t.deliveries} SET status = 'delivered', delivered_at = $1, last_error = NULL WHERE id = $2`,
        [now, id],
      );
    else if (outcome.status === 'failed')
      await tx.execute(`UPDATE ${ctx.t.deliveries} SET status = 'failed', last_error = $1 WHERE id = $2`, [
        outcome.error,
        id,
      ]);
    else
      await tx.execute(`UPDATE ${ctx.t.deliveries} SET next_at = $1, last_error = $2 WHERE id = $3`, [
        outcome.retryAt,
        outcome.error,
        id,
      ]);
  });
}

export async function listDeliveries(ctx: PgContext, runId: string): Promise<DeliveryRecord[]> {
  const rows = await ctx.read<DeliveryRow>(
    `SELECT * FROM ${ctx.t.deliveries} WHERE run_id = $1 ORDER BY created_at, id`,
    [runId],
  );
  return rows.map(toDelivery);
}
