/** Durable timers, the next moment anything is due, events reads, and the TTL sweeper. */
import type { BatonEvent } from '../../core/index.ts';
import type { TimerRecord } from '../records.ts';
import { json, toEvent, toTimer } from '../rows.ts';
import { type EventQuery, type SweepOptions, type SweepResult, TIMER_HOLD_MS } from '../store.ts';
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
    rows = ctx
      .stmt('SELECT * FROM events WHERE root_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?')
      .all(q.rootId, after, below, limit);
  else
    rows = ctx
      .stmt('SELECT * FROM events WHERE id > ? AND id < ? ORDER BY id LIMIT ?')
      .all(after, below, limit);
  return Promise.resolve((rows as Parameters<typeof toEvent>[0][]).map(toEvent));
}

/** Tables whose rows belong to one run (events go by root: they carry it and have its index). */
const OWNED_TABLES = ['steps', 'checkpoints', 'partials', 'timers', 'deliveries', 'signals'] as const;

/** The most expired trees one statement batch deletes (`gc`'s long slices use it; fewer statements). */
const MAX_BATCH = 256;

/**
 * A sweep's default slice: a quarter of the write slice. Deleting expired runs has no deadline, so
 * it yields the loop four times as often as deadline work may hold it: on a loaded 2-core machine
 * the kernel preempts a thread that keeps a core busy for milliseconds, and a sweep preempted inside
 * its write holds the loop for the wait too. In the retention bench's backlog (alternating pairs at
 * load 3.4-5.4) the loop was held p99 4.2-6.1 ms with 1 ms sweeps against 7.3-12.3 ms with 4 ms
 * sweeps, for the same CPU per deleted run.
 */
export const SWEEP_SLICE_MS = 1;

/** The share of the slice a sweep plans its deletes, COMMIT and vacuum into. */
const PLANNED_SHARE = 0.75;

/** Free pages returned to the disk per sweep (incremental auto-vacuum) when the slice has room. */
const VACUUM_PAGES = 64;

/**
 * What a sweep costs, learnt per connection (ms): deleting one expired tree, its share of the COMMIT
 * that writes the freed pages, and one incremental vacuum step. A batch is sized to the time left in
 * the slice, and the COMMIT and the vacuum are counted in it: the loop is held for the whole write,
 * not only the deletes (before they were counted, sweeps of a 4 ms slice took 5.4 ms of CPU at p50).
 */
interface SweepCosts {
  treeMs: number;
  commitPerTreeMs: number;
  vacuumMs: number;
}
const sweepCosts = new WeakMap<SqliteContext, SweepCosts>();

/** Up at once, down slowly: one cheap batch must not make the next one too large. */
function learn(known: number, seen: number): number {
  return seen > known ? seen : 0.75 * known + 0.25 * seen;
}

/**
 * Deletes expired run trees in batches sized to fit `sliceMs` — the deletes, their COMMIT and the
 * vacuum step together (at least one tree) — in one write: the event loop is held about a write
 * slice, and the caller sweeps again for the rest. Freed pages are reused by later writes; on a
 * file with incremental auto-vacuum a bounded number of them is also returned to the disk, when the
 * slice has room left for it.
 */
export function sweep(ctx: SqliteContext, options: SweepOptions = {}): Promise<SweepResult> {
  // A quarter of the slice is kept for what no estimate covers: BEGIN, finding the expired roots,
  // a tree dearer than the ones learnt from.
  const sliceMs = (options.sliceMs ?? SWEEP_SLICE_MS) * PLANNED_SHARE;
  return ctx.write((scope) => {
    // A first guess of 0.1 ms a tree (measured: 0.02-0.05 with a few events each) keeps the first
    // batch small; it adapts from there.
    const costs = sweepCosts.get(ctx) ?? { treeMs: 0.1, commitPerTreeMs: 0, vacuumMs: 0 };
    sweepCosts.set(ctx, costs);
    const started = ctx.clock.monotonic();
    const elapsed = () => ctx.clock.monotonic() - started;
    const expired = ctx.stmt(
      'SELECT id FROM runs WHERE parent_id IS NULL AND expires_at IS NOT NULL AND expires_at <= ? LIMIT ?',
    );
    const members = ctx.stmt('SELECT id FROM runs WHERE root_id IN (SELECT value FROM json_each(?))');
    let deleted = 0;
    let trees = 0;
    for (;;) {
      const cost = costs.treeMs + costs.commitPerTreeMs;
      const left = sliceMs - elapsed() - trees * costs.commitPerTreeMs;
      // Half the time left per batch: a tree's cost varies (its events, the pages it touches).
      if (deleted > 0 && left < 2 * cost) break;
      const batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(left / cost / 2)));
      const t0 = ctx.clock.monotonic();
      const roots = (expired.all(ctx.now(), batch) as Array<{ id: string }>).map((r) => r.id);
      if (roots.length === 0) break;
      const rootIds = json(roots);
      const runIds = json((members.all(rootIds) as Array<{ id: string }>).map((r) => r.id));
      ctx.stmt('DELETE FROM events WHERE root_id IN (SELECT value FROM json_each(?))').run(rootIds);
      for (const table of OWNED_TABLES)
        ctx.stmt(`DELETE FROM ${table} WHERE run_id IN (SELECT value FROM json_each(?))`).run(runIds);
      deleted += ctx
        .stmt('DELETE FROM runs WHERE root_id IN (SELECT value FROM json_each(?))')
        .run(rootIds).changes;
      trees += roots.length;
      const spent = ctx.clock.monotonic() - t0;
      // A ManualClock measures 0: keep the guess rather than learn that trees are free.
      if (spent > 0) costs.treeMs = learn(costs.treeMs, spent / roots.length);
      if (roots.length < batch) break;
    }
    if (deleted === 0) return { runs: 0 };
    ctx.forgetRoots();
    const room = sliceMs - elapsed() - trees * costs.commitPerTreeMs;
    if (room > costs.vacuumMs && ctx.stmt('PRAGMA auto_vacuum').pluck().get() === 2) {
      const t0 = ctx.clock.monotonic();
      ctx.stmt(`PRAGMA incremental_vacuum(${VACUUM_PAGES})`).run();
      costs.vacuumMs = learn(costs.vacuumMs, ctx.clock.monotonic() - t0);
    }
    // The COMMIT writes the pages the deletes freed: its time, per tree, sizes the next batches.
    scope.onCommit = (commitMs) => {
      // Averaged, not learnt up at once: one stall of the disk says little about the next commit.
      const seen = commitMs / trees;
      if (commitMs > 0)
        costs.commitPerTreeMs =
          costs.commitPerTreeMs === 0 ? seen : 0.75 * costs.commitPerTreeMs + 0.25 * seen;
    };
    return { runs: deleted };
  });
}
