/** Claiming runs under leases, heartbeats, and giving runs back when a lease expires or its owner is gone. */
import { newEvent } from '../../core/index.ts';
import type { RunRecord, WorkerRecord } from '../records.ts';
import { json, toRun, toWorker } from '../rows.ts';
import type { ClaimRequest, RecoveredRun } from '../store.ts';
import { RUN_COLUMNS, runRowOf } from './run-row.ts';
import type { SqliteContext } from './sqlite-context.ts';
import type { WriteScope } from './write-queue.ts';

// Whether a run can be claimed now (checked again by the claim itself).
const CLAIMABLE = `kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer')) AND (
    (status = 'queued' AND (wake_at IS NULL OR wake_at <= @now))
    OR (status = 'waiting' AND wait_reason = 'timer' AND wake_at <= @now))`;

/**
 * Two ways in, one index each (migration 0023): runs claimable with no wake time, in claim order,
 * and runs whose wake time has come, earliest first. A claim thus never reads runs that are not due
 * (100,000 asleep cost nothing), and the terms repeat each index's condition so SQLite uses it.
 */
const READY = `kind = 'task' AND status = 'queued' AND wake_at IS NULL`;
const DUE = `kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'))
  AND wake_at IS NOT NULL AND wake_at <= @now`;

/**
 * Runs under a lease, as index runs_leased (migration 0024) holds them: the terms repeat its
 * condition so that SQLite uses it (a flow is 'running' without a lease and is not in it).
 */
export const LEASED = `status = 'running' AND lease_owner IS NOT NULL`;

interface Candidate {
  id: string;
  name: string;
  priority?: number;
}

/** Both lists in claim order (priority, then creation), as one scan of every claimable run would give. */
function claimOrder(ready: Candidate[], due: Candidate[]): Candidate[] {
  if (due.length === 0) return ready;
  if (ready.length === 0) return due.sort(byClaimOrder);
  return [...ready, ...due].sort(byClaimOrder);
}

function byClaimOrder(a: Candidate, b: Candidate): number {
  return (b.priority ?? 0) - (a.priority ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function claimRuns(ctx: SqliteContext, req: ClaimRequest): Promise<RunRecord[]> {
  if (req.limit <= 0 || req.names.length === 0 || req.ids?.length === 0) return Promise.resolve([]);
  const names = json(req.names);
  return ctx.write(
    () => {
      const now = ctx.now();
      const limits = req.nameLimits ?? {};
      const limited = Object.keys(limits).filter((n) => req.names.includes(n));
      const running = new Map<string, number>();
      if (limited.length > 0) {
        const rows = ctx
          .stmt(
            "SELECT name, count(*) AS n FROM runs WHERE status = 'running' AND name IN (SELECT value FROM json_each(?)) GROUP BY name",
          )
          .all(json(limited)) as Array<{ name: string; n: number }>;
        for (const r of rows) running.set(r.name, r.n);
      }
      // Scan a little more than needed so that runs of a task at its limit do not starve the others.
      const scan = limited.length > 0 ? req.limit * 4 + 16 : req.limit;
      const candidates =
        req.ids === undefined
          ? claimOrder(
              ctx
                .stmt(
                  `SELECT id, name, priority FROM runs WHERE ${READY} AND name IN (SELECT value FROM json_each(@names))
                 ORDER BY priority DESC, id LIMIT @scan`,
                )
                .all({ names, scan }) as Candidate[],
              ctx
                .stmt(
                  `SELECT id, name, priority FROM runs WHERE ${DUE} AND name IN (SELECT value FROM json_each(@names))
                 ORDER BY wake_at LIMIT @scan`,
                )
                .all({ now, names, scan }) as Candidate[],
            )
          : (ctx
              .stmt(
                `SELECT id, name FROM runs WHERE id IN (SELECT value FROM json_each(@ids)) AND ${CLAIMABLE} AND name IN (SELECT value FROM json_each(@names)) ORDER BY priority DESC, id LIMIT @scan`,
              )
              .all({ now, names, scan, ids: json(req.ids) }) as Candidate[]);
      // Chosen here, claimed below in one statement and read back in one: the transaction holds the
      // write lock, so every candidate read above is still claimable. (A per-run `UPDATE … RETURNING *`
      // cost twice a plain UPDATE: SQLite buffers RETURNING rows in a temporary table.)
      const chosen: string[] = [];
      for (const c of candidates) {
        if (chosen.length >= req.limit) break;
        const limit = limits[c.name];
        if (limit !== undefined && (running.get(c.name) ?? 0) >= limit) continue;
        running.set(c.name, (running.get(c.name) ?? 0) + 1);
        chosen.push(c.id);
      }
      if (chosen.length === 0) return [];
      const ids = json(chosen);
      ctx
        .stmt(
          `UPDATE runs SET status = 'running', wait_reason = NULL, wake_at = NULL, lease_owner = @owner,
           lease_expires_at = @expires, lease_token = lease_token + 1, attempt = attempt + 1,
           started_at = coalesce(started_at, @now),
           deadline_at = coalesce(deadline_at, CASE WHEN budget_ms IS NULL THEN NULL ELSE @now + budget_ms END),
           updated_at = @now
         WHERE id IN (SELECT value FROM json_each(@ids)) AND ${CLAIMABLE}`,
        )
        .run({ owner: req.owner, expires: now + req.leaseMs, now, ids });
      const rows = (
        ctx
          .rawStmt(
            `SELECT ${RUN_COLUMNS} FROM runs WHERE id IN (SELECT value FROM json_each(?)) AND status = 'running' AND lease_owner = ?`,
          )
          .all(ids, req.owner) as unknown[][]
      ).map(runRowOf);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const claimed: RunRecord[] = [];
      // In claim order (priority, then creation), as the candidates were read.
      for (const id of chosen) {
        const row = byId.get(id);
        if (!row) continue;
        // Its attempt's events are appended next: they need not read the root back.
        ctx.knowRoot(row.id, row.root_id);
        claimed.push(toRun(row));
      }
      return claimed;
      // Answered at its COMMIT once every earlier commit is durable, not after its own WAL sync: the
      // attempts it starts fill the next commit while that sync runs (WriteOptions.atCommit says why
      // that is safe). A claim of given runs (an offer) shares its commit with the write that made
      // them claimable — their creation, a resume — and waits for that to be durable first.
    },
    { atCommit: req.ids === undefined },
  );
}

export function heartbeat(
  ctx: SqliteContext,
  owner: string,
  leaseMs: number,
  active: readonly string[],
): Promise<string[]> {
  const ids = json(active);
  return ctx.write(() => {
    const now = ctx.now();
    ctx.stmt('UPDATE workers SET heartbeat_at = ? WHERE id = ?').run(now, owner);
    ctx
      .stmt(
        `UPDATE runs SET lease_expires_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ? AND ${LEASED}`,
      )
      .run(now + leaseMs, ids, owner);
    const rows = ctx
      // In creation order, as the owner index gave them before migration 0024 (and Postgres does);
      // named, or SQLite reads the whole table in rowid order rather than sort the few leased runs.
      .stmt(`SELECT id FROM runs INDEXED BY runs_leased WHERE ${LEASED} AND lease_owner = ? ORDER BY rowid`)
      .all(owner) as Array<{
      id: string;
    }>;
    return rows.map((r) => r.id);
  });
}

function requeue(
  ctx: SqliteContext,
  scope: WriteScope,
  rows: Array<{ id: string; lease_owner: string }>,
  reason: 'expired' | 'owner_gone' | 'released',
): RecoveredRun[] {
  const now = ctx.now();
  const update = ctx.stmt(
    "UPDATE runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = ? AND status = 'running' AND lease_owner = ?",
  );
  const out: RecoveredRun[] = [];
  for (const r of rows) {
    if (update.run(now, r.id, r.lease_owner).changes !== 1) continue;
    ctx.appendEvents(scope, [
      newEvent(r.id, 'lease:recovered', { previousOwner: r.lease_owner, reason }),
      newEvent(r.id, 'run:queued', { reason: reason === 'released' ? 'released' : 'lease_recovered' }),
    ]);
    out.push({ runId: r.id, previousOwner: r.lease_owner });
  }
  return out;
}

export function recoverExpiredLeases(ctx: SqliteContext): Promise<RecoveredRun[]> {
  return ctx.write((scope) => {
    const rows = ctx
      .stmt(
        `SELECT id, lease_owner FROM runs WHERE ${LEASED} AND lease_expires_at <= ?
         ORDER BY lease_expires_at, rowid LIMIT 1000`,
      )
      .all(ctx.now()) as Array<{ id: string; lease_owner: string }>;
    return requeue(ctx, scope, rows, 'expired');
  });
}

export function releaseOwners(
  ctx: SqliteContext,
  owners: readonly string[],
  reason: 'owner_gone' | 'released',
): Promise<RecoveredRun[]> {
  if (owners.length === 0) return Promise.resolve([]);
  return ctx.write((scope) => {
    const rows = ctx
      .stmt(
        `SELECT id, lease_owner FROM runs INDEXED BY runs_leased WHERE ${LEASED} AND lease_owner IN (SELECT value FROM json_each(?))
         ORDER BY rowid`,
      )
      .all(json(owners)) as Array<{ id: string; lease_owner: string }>;
    return requeue(ctx, scope, rows, reason);
  });
}

export function registerWorker(ctx: SqliteContext, w: WorkerRecord): Promise<void> {
  return ctx.write(() => {
    ctx
      .stmt(
        'INSERT OR REPLACE INTO workers (id, host, pid, process_start, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(w.id, w.host, w.pid, w.processStart, w.startedAt, w.heartbeatAt);
  });
}

export function listWorkers(ctx: SqliteContext, host?: string): Promise<WorkerRecord[]> {
  const rows =
    host === undefined
      ? ctx.stmt('SELECT * FROM workers ORDER BY started_at').all()
      : ctx.stmt('SELECT * FROM workers WHERE host = ? ORDER BY started_at').all(host);
  return Promise.resolve((rows as Parameters<typeof toWorker>[0][]).map(toWorker));
}

export function removeWorkers(ctx: SqliteContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return ctx.write(() => {
    ctx.stmt('DELETE FROM workers WHERE id IN (SELECT value FROM json_each(?))').run(json(ids));
  });
}
