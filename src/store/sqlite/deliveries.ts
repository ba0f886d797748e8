/** Effects written with run changes (timers, deliveries), and the delivery queue of the SQLite store. */
import type { NewEvent } from '../../core/index.ts';
import type { DeliveryRecord, Effects } from '../records.ts';
import { type DeliveryRow, json, toDelivery } from '../rows.ts';
import type { DeliveryTake } from '../store.ts';
import type { SqliteContext } from './sqlite-context.ts';

/** Writes timers and deliveries inside the caller's transaction. Deliveries already queued are kept. */
export function writeEffects(ctx: SqliteContext, effects: Effects | undefined): void {
  if (!effects) return;
  const now = ctx.now();
  for (const t of effects.timers ?? [])
    ctx
      .stmt(
        'INSERT OR REPLACE INTO timers (id, run_id, kind, due_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(t.id, t.runId, t.kind, t.dueAt, json(t.payload), t.createdAt);
  if (effects.cancelTimers?.length)
    ctx
      .stmt('DELETE FROM timers WHERE id IN (SELECT value FROM json_each(?))')
      .run(json(effects.cancelTimers));
  for (const d of effects.deliveries ?? [])
    ctx
      .stmt(
        `INSERT INTO deliveries (id, run_id, kind, channel, route, target, payload, idempotency_key, status, attempts, next_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
      )
      .run(
        d.id,
        d.runId,
        d.kind,
        d.channel,
        d.route,
        json(d.target),
        json(d.payload),
        d.idempotencyKey,
        now,
        now,
      );
}

export function takeDueDeliveries(ctx: SqliteContext, take: DeliveryTake): Promise<DeliveryRecord[]> {
  if (take.routes.length === 0 || take.limit <= 0) return Promise.resolve([]);
  return ctx.write(() => {
    const now = ctx.now();
    const rows = ctx
      .stmt(
        `SELECT * FROM deliveries WHERE status = 'pending' AND next_at <= ?
           AND route IN (SELECT value FROM json_each(?)) ORDER BY next_at LIMIT ?`,
      )
      .all(now, json(take.routes), take.limit) as DeliveryRow[];
    const hide = ctx.stmt('UPDATE deliveries SET attempts = ?, next_at = ? WHERE id = ?');
    const taken = rows.map((r) => {
      const attempts = r.attempts + 1;
      const nextAt = now + take.hideMs(r.route, attempts);
      hide.run(attempts, nextAt, r.id);
      return toDelivery({ ...r, attempts, next_at: nextAt });
    });
    return taken.sort((a, b) => a.createdAt - b.createdAt);
  });
}

export function settleDelivery(
  ctx: SqliteContext,
  id: string,
  outcome:
    | { status: 'delivered' }
    | { status: 'failed'; error: string }
    | { status: 'retry'; error: string; retryAt: number },
  events: readonly NewEvent[] = [],
): Promise<void> {
  return ctx.write((scope) => {
    const now = ctx.now();
    if (events.length > 0) ctx.appendEvents(scope, events);
    if (outcome.status === 'delivered')
      ctx
        .stmt("UPDATE deliveries SET status = 'delivered', delivered_at = ?, last_error = NULL WHERE id = ?")
        .run(now, id);
    else if (outcome.status === 'failed')
      ctx.stmt("UPDATE deliveries SET status = 'failed', last_error = ? WHERE id = ?").run(outcome.error, id);
    else
      ctx
        .stmt('UPDATE deliveries SET next_at = ?, last_error = ? WHERE id = ?')
        .run(outcome.retryAt, outcome.error, id);
  });
}

export function listDeliveries(ctx: SqliteContext, runId: string): Promise<DeliveryRecord[]> {
  const rows = ctx
    .stmt('SELECT * FROM deliveries WHERE run_id = ? ORDER BY created_at, id')
    .all(runId) as DeliveryRow[];
  return Promise.resolve(rows.map(toDelivery));
}
