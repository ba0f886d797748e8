/** Durable timers, the next moment anything is due, and events reads. */
import type { BatonEvent } from '../../core/index.ts';
import type { TimerRecord } from '../records.ts';
import { json, toEvent, toTimer } from '../rows.ts';
import { type EventQuery, TIMER_HOLD_MS } from '../store.ts';
import { LEASED } from './claims.ts';
import type { SqliteContext } from './sqlite-context.ts';

export function addTimer(ctx: SqliteContext, t: TimerRecord): Promise<void> {
  const payload = json(t.payload);
  return ctx.write(() => {
    ctx
      .stmt(
        'INSERT OR REPLACE INTO timers (id, run_id, kind, due_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(t.id, t.runId, t.kind, t.dueAt, payload, t.createdAt);
  });
}

export function takeDueTimers(ctx: SqliteContext, limit: number): Promise<TimerRecord[]> {
  return ctx.write(() => {
    const rows = ctx
      .stmt(
        `UPDATE timers SET taken_until = ? WHERE id IN (SELECT id FROM timers WHERE due_at <= ?
           AND (taken_until IS NULL OR taken_until <= ?) ORDER BY due_at LIMIT ?) RETURNING *`,
      )
      .all(ctx.now() + TIMER_HOLD_MS, ctx.now(), ctx.now(), limit) as Parameters<typeof toTimer>[0][];
    return rows.map(toTimer).sort((a, b) => a.dueAt - b.dueAt);
  });
}

export function cancelTimers(ctx: SqliteContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return ctx.write(() => {
    ctx.stmt('DELETE FROM timers WHERE id IN (SELECT value FROM json_each(?))').run(json(ids));
  });
}

export function nextWakeAt(
  ctx: SqliteContext,
  deliveryRoutes: readonly string[] = [],
): Promise<number | undefined> {
  const row = ctx
    .stmt(
      `SELECT min(
         coalesce((SELECT min(due_at) FROM timers WHERE taken_until IS NULL), 9e15),
         coalesce((SELECT min(wake_at) FROM runs WHERE wake_at IS NOT NULL AND status IN ('queued', 'waiting')), 9e15),
         coalesce((SELECT min(lease_expires_at) FROM runs WHERE ${LEASED}), 9e15),
         coalesce((SELECT min(next_at) FROM deliveries WHERE status = 'pending'
                   AND route IN (SELECT value FROM json_each(?))), 9e15)) AS at`,
    )
    .get(json(deliveryRoutes)) as { at: number };
  return Promise.resolve(row.at >= 9e15 ? undefined : row.at);
}

/**
 * A tree's events in id order: the root's own through events_run, the other runs' through the
 * partial events_root (migration 0027: it holds only events whose run is not their root). SQLite
 * merges the two index walks by id and stops at the limit.
 */
const TREE_EVENTS = `SELECT * FROM events WHERE run_id = ? AND root_id = run_id AND id > ? AND id < ?
  UNION ALL SELECT * FROM events WHERE root_id = ? AND root_id <> run_id AND id > ? AND id < ?
  ORDER BY id LIMIT ?`;

export function readEvents(ctx: SqliteContext, q: EventQuery): Promise<BatonEvent[]> {
  const after = q.afterId ?? 0;
  const limit = Math.min(Math.max(1, q.limit ?? 1000), 10_000);
  // Events of commits whose WAL sync has not finished yet are not handed out (see write-queue.ts).
  const below = ctx.queue.firstUnsyncedEventId() ?? Number.MAX_SAFE_INTEGER;
  let rows: unknown[];
  if (q.runId !== undefined)
    rows = ctx
      .stmt('SELECT * FROM events WHERE run_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?')
      .all(q.runId, after, below, limit);
  else if (q.rootId !== undefined)
    rows = ctx.stmt(TREE_EVENTS).all(q.rootId, after, below, q.rootId, after, below, limit);
  else
    rows = ctx
      .stmt('SELECT * FROM events WHERE id > ? AND id < ? ORDER BY id LIMIT ?')
      .all(after, below, limit);
  return Promise.resolve((rows as Parameters<typeof toEvent>[0][]).map(toEvent));
}
