/** Durable timers, the next moment anything is due, events reads, and the TTL sweeper. */
import type { BatonEvent } from '../../core/index.ts';
import type { TimerRecord } from '../records.ts';
import { json, toEvent, toTimer } from '../rows.ts';
import { type EventQuery, type SweepResult, TIMER_HOLD_MS } from '../store.ts';
import { UPSERT_TIMER } from './deliveries.ts';
import type { PgContext } from './pg-context.ts';

export function addTimer(ctx: PgContext, t: TimerRecord): Promise<void> {
  const payload = json(t.payload);
  return ctx.write(async (tx) => {
    tx.scope.wake = true;
    await tx.execute(UPSERT_TIMER(ctx.t.timers), [t.id, t.runId, t.kind, t.dueAt, payload, t.createdAt]);
  });
}

/**
 * UPDATE … RETURNING over rows locked with SKIP LOCKED: concurrent takers never get the same timer.
 * One statement, atomic by itself and appending no events, sent at once outside the write queue:
 * every worker looks at the timers on every poll, and an idle one's round trips are its load.
 */
export async function takeDueTimers(ctx: PgContext, limit: number): Promise<TimerRecord[]> {
  const rows = await ctx.pollRead<Parameters<typeof toTimer>[0]>(
    `UPDATE ${ctx.t.timers} SET taken_until = $3
     WHERE id IN (SELECT id FROM ${ctx.t.timers} WHERE due_at <= $1 AND (taken_until IS NULL OR taken_until <= $1)
       ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [ctx.now(), Math.max(0, limit), ctx.now() + TIMER_HOLD_MS],
  );
  return rows.map(toTimer).sort((a, b) => a.dueAt - b.dueAt);
}

export function cancelTimers(ctx: PgContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return ctx.write(async (tx) => {
    await tx.execute(`DELETE FROM ${ctx.t.timers} WHERE id = ANY($1::text[])`, [ids]);
  });
}

export async function nextWakeAt(
  ctx: PgContext,
  deliveryRoutes: readonly string[] = [],
): Promise<number | undefined> {
  // LEAST ignores NULLs; it is NULL only when nothing at all is due.
  const [row] = await ctx.pollRead<{ at: number | null }>(
    `SELECT LEAST(
       (SELECT min(due_at) FROM ${ctx.t.timers} WHERE taken_until IS NULL),
       (SELECT min(wake_at) FROM ${ctx.t.runs} WHERE wake_at IS NOT NULL AND status IN ('queued', 'waiting')),
       (SELECT min(lease_expires_at) FROM ${ctx.t.runs} WHERE status = 'running'),
       (SELECT min(next_at) FROM ${ctx.t.deliveries} WHERE status = 'pending' AND route = ANY($1::text[]))) AS at`,
    [[...deliveryRoutes]],
  );
  return row?.at ?? undefined;
}

export async function readEvents(ctx: PgContext, q: EventQuery): Promise<BatonEvent[]> {
  const after = q.afterId ?? 0;
  const limit = Math.min(Math.max(1, q.limit ?? 1000), 10_000);
  const t = ctx.t.events;
  const rows =
    q.runId !== undefined
      ? await ctx.read(`SELECT * FROM ${t} WHERE run_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
          q.runId,
          after,
          limit,
        ])
      : q.rootId !== undefined
        ? await ctx.read(`SELECT * FROM ${t} WHERE root_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
            q.rootId,
            after,
            limit,
          ])
        : await ctx.read(`SELECT * FROM ${t} WHERE id > $1 ORDER BY id LIMIT $2`, [after, limit]);
  return (rows as Parameters<typeof toEvent>[0][]).map(toEvent);
}

/** Tables whose rows belong to a run (deleted with it). Events go by root_id, which they carry. */
const OWNED_TABLES = ['steps', 'checkpoints', 'partials', 'timers', 'deliveries', 'signals'] as const;

export function sweep(ctx: PgContext): Promise<SweepResult> {
  return ctx.write(async (tx) => {
    // SKIP LOCKED: sweepers in other processes take other expired trees at the same moment.
    const roots = await tx.select<{ id: string }>(
      `SELECT id FROM ${ctx.t.runs} WHERE parent_id IS NULL AND expires_at IS NOT NULL AND expires_at <= $1
       ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED`,
      [ctx.now()],
    );
    if (roots.length === 0) return { runs: 0 };
    const ids = roots.map((r) => r.id);
    const owned = `SELECT id FROM ${ctx.t.runs} WHERE root_id = ANY($1::text[])`;
    for (const table of OWNED_TABLES)
      await tx.execute(`DELETE FROM ${ctx.t[table]} WHERE run_id IN (${owned})`, [ids]);
    await tx.execute(`DELETE FROM ${ctx.t.events} WHERE root_id = ANY($1::text[])`, [ids]);
    const deleted = await tx.execute(`DELETE FROM ${ctx.t.runs} WHERE root_id = ANY($1::text[])`, [ids]);
    ctx.forgetRoots();
    return { runs: deleted };
  });
}
