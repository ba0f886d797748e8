/** Claiming runs under leases and giving runs back when a lease expires or its owner is gone. */
import { newEvent } from '../../core/index.ts';
import type { RunRecord, WorkerRecord } from '../records.ts';
import { type RunRow, toRun, toWorker } from '../rows.ts';
import type { ClaimRequest, RecoveredRun } from '../store.ts';
import type { PgContext } from './pg-context.ts';
import { runColumns, runFromArray } from './run-columns.ts';
import { LOCK_TASK_LIMIT } from './sql.ts';
import { AfterCommit, type Tx } from './write-queue.ts';

// Whether a run can be claimed now (checked again when it is claimed among offered ids).
const CLAIMABLE = (
  now: string,
) => `kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'))
  AND ((status = 'queued' AND (wake_at IS NULL OR wake_at <= ${now}))
    OR (status = 'waiting' AND wait_reason = 'timer' AND wake_at <= ${now}))`;

/** Placeholders of one statement's values: `$n` of each. */
interface PickParams {
  now: string;
  names: string;
  limit: string;
  ids?: string;
}

/**
 * The runs a claim may take, locked, with their priority: `ready` and `due` CTEs and the `pick`
 * query that reads both in claim order, at most `limit`. Two ways in, one index each (migration
 * 0023): runs claimable with no wake time, in claim order, and runs whose wake time has come,
 * earliest first, so a claim never reads runs asleep for later (100,000 asleep cost nothing). Each
 * repeats its index's predicate word for word so the planner uses it. Both lock with FOR UPDATE
 * SKIP LOCKED: a claimer in another process that looks at the same runs gets the next ones instead
 * of waiting, and no run is ever handed to two claimers. Up to twice `limit` rows are locked and the
 * pick keeps `limit`; the rest are free again when the statement's transaction ends. Offered runs
 * (`ids`) are found by their key and checked as they are.
 */
function pickCandidates(ctx: PgContext, p: PickParams): { ctes: string; pick: string } {
  if (p.ids !== undefined)
    return {
      ctes: `ready AS (SELECT id, name, priority FROM ${ctx.t.runs}
         WHERE id = ANY(${p.ids}::text[]) AND ${CLAIMABLE(p.now)} AND name = ANY(${p.names}::text[])
         ORDER BY priority DESC, id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED)`,
      pick: 'SELECT id, name FROM ready ORDER BY priority DESC, id',
    };
  return {
    ctes: `ready AS (SELECT id, name, priority FROM ${ctx.t.runs}
       WHERE kind = 'task' AND status = 'queued' AND wake_at IS NULL AND name = ANY(${p.names}::text[])
       ORDER BY priority DESC, id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED),
     due AS (SELECT id, name, priority FROM ${ctx.t.runs}
       WHERE kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'))
         AND wake_at IS NOT NULL AND wake_at <= ${p.now} AND name = ANY(${p.names}::text[])
       ORDER BY wake_at LIMIT ${p.limit} FOR UPDATE SKIP LOCKED)`,
    pick: `SELECT id, name FROM (SELECT * FROM ready UNION ALL SELECT * FROM due) c
       ORDER BY priority DESC, id LIMIT ${p.limit}`,
  };
}

/**
 * Candidates are locked as they are read (pickCandidates). Per-task limits hold across processes through an advisory lock per limited task, taken (in name
 * order) before counting the task's running runs and held until COMMIT.
 */
export function claimRuns(ctx: PgContext, req: ClaimRequest): Promise<RunRecord[]> {
  if (req.limit <= 0 || req.names.length === 0 || req.ids?.length === 0) return Promise.resolve([]);
  const limits = req.nameLimits ?? {};
  const limited = Object.keys(limits)
    .filter((n) => req.names.includes(n))
    .sort();
  if (limited.length === 0 && !req.ids) return claimAlone(ctx, req);
  return ctx.write<RunRecord[]>(async (tx) => {
    const now = ctx.now();
    const running = await countRunning(ctx, tx, limited);
    const room = (name: string) => {
      const limit = limits[name];
      return limit === undefined ? Number.POSITIVE_INFINITY : limit - (running.get(name) ?? 0);
    };
    const names = req.names.filter((n) => room(n) > 0);
    if (names.length === 0) return [];
    if (limited.length === 0) return claimUnlimited(ctx, tx, req, names, now);
    // Scan a little more than needed so that runs of a task at its limit do not starve the others.
    const scan = limited.length > 0 ? req.limit * 4 + 16 : req.limit;
    const { ctes, pick } = pickCandidates(ctx, {
      now: '$1',
      names: '$2',
      limit: '$3',
      ...(req.ids ? { ids: '$4' } : {}),
    });
    const candidates = await tx.select<{ id: string; name: string }>(
      `WITH ${ctes} ${pick}`,
      req.ids ? [now, names, scan, req.ids] : [now, names, scan],
      'none',
    );
    const picked: string[] = [];
    for (const c of candidates) {
      if (picked.length >= req.limit) break;
      if (room(c.name) <= 0) continue;
      running.set(c.name, (running.get(c.name) ?? 0) + 1);
      picked.push(c.id);
    }
    if (picked.length === 0) return [];
    const rows = await tx.select<RunRow>(
      `UPDATE ${ctx.t.runs} SET status = 'running', wait_reason = NULL, wake_at = NULL, lease_owner = $1,
         lease_expires_at = $2, lease_token = lease_token + 1, lease_claim = $5, attempt = attempt + 1,
         started_at = coalesce(started_at, $3),
         deadline_at = coalesce(deadline_at, CASE WHEN budget_ms IS NULL THEN NULL ELSE $3 + budget_ms END),
         updated_at = $3
       WHERE id = ANY($4::text[]) AND ${CLAIMABLE('$3')} RETURNING *`,
      [req.owner, now + req.leaseMs, now, picked, req.claim ?? null],
      picked,
    );
    // In claim order (priority, then id), as the candidates were read.
    const byId = new Map(rows.map((r) => [r.id, r]));
    return picked.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [];
      ctx.rememberRoot(row.id, row.root_id);
      return [toRun(row)];
    });
  });
}

/**
 * Picks and claims in one statement (no per-task limit to count against). With `durable: false` the
 * statement's own commit (it runs alone, as its implicit transaction) does not wait for its WAL
 * flush: `set_config(…, true)` is SET LOCAL, read when that transaction commits.
 */
function claimStatement(
  ctx: PgContext,
  req: ClaimRequest,
  names: readonly string[],
  now: number,
  durable = true,
): { text: string; values: unknown[] } {
  const { ctes, pick } = pickCandidates(ctx, {
    now: '$3',
    names: '$4',
    limit: '$5',
    ...(req.ids ? { ids: '$7' } : {}),
  });
  const asynchronous = durable ? '' : `, (SELECT set_config('synchronous_commit', 'off', true)) async_commit`;
  return {
    text: `WITH ${ctes}, picked AS (${pick})
     , claimed AS (UPDATE ${ctx.t.runs} r SET status = 'running', wait_reason = NULL, wake_at = NULL, lease_owner = $1,
       lease_expires_at = $2, lease_token = lease_token + 1, lease_claim = $6, attempt = attempt + 1,
       started_at = coalesce(started_at, $3),
       deadline_at = coalesce(deadline_at, CASE WHEN budget_ms IS NULL THEN NULL ELSE $3 + budget_ms END),
       updated_at = $3
     FROM picked WHERE r.id = picked.id RETURNING ${runColumns('r')})
     -- In claim order (priority, then id), as a separate read of the candidates would give them.
     SELECT ${runColumns('claimed')} FROM claimed${asynchronous} ORDER BY claimed.priority DESC, claimed.id`,
    values: [
      req.owner,
      now + req.leaseMs,
      now,
      names,
      req.limit,
      req.claim ?? null,
      ...(req.ids ? [req.ids] : []),
    ],
  };
}

/** The runs a claimStatement returned (rows as arrays, in runColumns order). */
function claimed(ctx: PgContext, rows: readonly unknown[][]): RunRecord[] {
  return rows.map((row) => {
    const { run } = runFromArray(row);
    ctx.rememberRoot(run.id, run.rootId);
    return run;
  });
}

/**
 * A claim of offered runs (`ids`) waits in the write queue behind the write that created them. Its
 * rows are only the write's result, so the statement goes with the batch's next round trip.
 */
async function claimUnlimited(
  ctx: PgContext,
  tx: Tx,
  req: ClaimRequest,
  names: readonly string[],
  now: number,
): Promise<AfterCommit<RunRecord[]>> {
  const { text, values } = claimStatement(ctx, req, names, now);
  const later = await tx.laterQuery<unknown[]>(text, values, 'claimable', true);
  return new AfterCommit(() => claimed(ctx, later.rows));
}

/**
 * Any claimable run, no per-task limit: one statement, atomic by itself, sent at once on its own
 * connection outside the write queue. It takes only rows no one has locked (SKIP LOCKED) and
 * appends no events, so it needs neither the queue's order nor its transaction, and a worker's
 * next runs no longer wait for the batch of ends in flight to commit first.
 *
 * A claim its claimer named (`claim`) answers without waiting for its WAL flush (at load, most of
 * an enqueue -> start). A server crash within the WAL writer's delay (≤ 200 ms by default) can
 * lose it: the run is queued again with its old lease token and attempt, and its next claim gives
 * the same token. The fence's claim name is what differs, so every write of the lost claim's
 * attempt is refused (LEASE_LOST) — and none of them can have been kept: each is a durable commit,
 * and flushing one flushes the claim before it. The claimer's heartbeat finds the run not held, or
 * its own next claim hands it the run again (the worker then stops the first attempt).
 * Unnamed claims stay durable. Sent with other poll statements in one message, the whole message's
 * implicit transaction commits without the wait: the heartbeat's lease extensions and the timer
 * takes, both safe to lose (a shorter lease, a timer taken again).
 */
async function claimAlone(ctx: PgContext, req: ClaimRequest): Promise<RunRecord[]> {
  const { text, values } = claimStatement(ctx, req, req.names, ctx.now(), req.claim === undefined);
  return claimed(ctx, await ctx.pollReadArrays(text, values));
}

async function countRunning(
  ctx: PgContext,
  tx: Tx,
  limited: readonly string[],
): Promise<Map<string, number>> {
  const running = new Map<string, number>();
  if (limited.length === 0) return running;
  // One lock per limited task, in name order: claimers of the same task count and claim in turn,
  // and a claimer sees the runs the previous one claimed (it committed before releasing the lock).
  for (const name of limited)
    await tx.select(
      'SELECT pg_advisory_xact_lock($1, hashtext($2))',
      [LOCK_TASK_LIMIT, JSON.stringify([ctx.t.schema, name])],
      'none',
    );
  const rows = await tx.select<{ name: string; n: number }>(
    `SELECT name, count(*) AS n FROM ${ctx.t.runs} WHERE status = 'running' AND name = ANY($1::text[])
     GROUP BY name`,
    [limited],
    'none',
  );
  for (const r of rows) running.set(r.name, r.n);
  return running;
}

/**
 * Requeues the runs the `pick` query selects (`id`, `lease_owner`, and the `sort` key; locked in id
 * order). The lease owner returned is the one the lock saw, so a run another process recovered or
 * finished meanwhile is not reported twice. Results and events follow `sort`, the order in which
 * the SQLite store finds them.
 */
async function requeue(
  ctx: PgContext,
  tx: Tx,
  pick: string,
  values: unknown[],
  reason: 'expired' | 'owner_gone' | 'released',
): Promise<RecoveredRun[]> {
  const now = ctx.now();
  const rows = await tx.select<{ id: string; previous_owner: string }>(
    `WITH picked AS (${pick}),
     requeued AS (
       UPDATE ${ctx.t.runs} r SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = $1
       FROM picked WHERE r.id = picked.id
       RETURNING r.id, picked.lease_owner AS previous_owner, picked.sort)
     SELECT id, previous_owner FROM requeued ORDER BY sort`,
    [now, ...values],
  );
  await ctx.appendEvents(
    tx,
    rows.flatMap((r) => [
      newEvent(r.id, 'lease:recovered', { previousOwner: r.previous_owner, reason }),
      newEvent(r.id, 'run:queued', { reason: reason === 'released' ? 'released' : 'lease_recovered' }),
    ]),
  );
  return rows.map((r) => ({ runId: r.id, previousOwner: r.previous_owner }));
}

/**
 * Whether a lease has expired, asked for with the look for dead workers on this host (`listWorkers`
 * with a host, which the poll's recovery sends first): both share that round trip, and the recovery
 * that follows within the same moment uses the answer instead of asking again.
 */
interface ExpiryProbe {
  expired: Promise<boolean>;
  at: number;
  wall: number;
}
const probes = new WeakMap<PgContext, ExpiryProbe>();
/** How long after it was read an answer still serves (wall and store clock alike). */
const PROBE_FRESH_MS = 100;

function probeExpired(ctx: PgContext, now: number): Promise<boolean> {
  return ctx
    .pollRead<{ expired: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${ctx.t.runs} WHERE status = 'running' AND lease_expires_at <= $1) AS expired`,
      [now],
    )
    .then(([row]) => row?.expired === true);
}

/** The answer read with the workers a moment ago, once; undefined when there is none to use. */
function takeProbe(ctx: PgContext, now: number): Promise<boolean> | undefined {
  const probe = probes.get(ctx);
  probes.delete(ctx);
  if (!probe) return undefined;
  const wall = performance.now() - probe.wall;
  // The store's clock moved no more than real time did (a test's clock that jumped asks again), and
  // a lease that expired since is one that expired in the last 100 ms: the next pass takes it.
  return wall <= PROBE_FRESH_MS && now >= probe.at && now - probe.at <= wall + 1 ? probe.expired : undefined;
}

export async function recoverExpiredLeases(ctx: PgContext): Promise<RecoveredRun[]> {
  // Every worker looks on every poll, and almost always nothing has expired: one read says so,
  // where the write (its events need a transaction) takes three round trips.
  const now = ctx.now();
  const expired = await (takeProbe(ctx, now) ?? probeExpired(ctx, now));
  if (!expired) return [];
  // SKIP LOCKED: a run locked right now is being written by its owner or recovered by another
  // process; the next pass looks at it again.
  return ctx.write((tx) =>
    requeue(
      ctx,
      tx,
      `SELECT id, lease_owner, ARRAY[lease_expires_at, created_seq] AS sort FROM ${ctx.t.runs}
       WHERE status = 'running' AND lease_expires_at <= $1 ORDER BY id LIMIT 1000 FOR UPDATE SKIP LOCKED`,
      [],
      'expired',
    ),
  );
}

export function releaseOwners(
  ctx: PgContext,
  owners: readonly string[],
  reason: 'owner_gone' | 'released',
): Promise<RecoveredRun[]> {
  if (owners.length === 0) return Promise.resolve([]);
  return ctx.write((tx) =>
    requeue(
      ctx,
      tx,
      `SELECT id, lease_owner, ARRAY[created_seq] AS sort FROM ${ctx.t.runs}
       WHERE status = 'running' AND lease_owner = ANY($2::text[]) ORDER BY id FOR UPDATE`,
      [owners],
      reason,
    ),
  );
}

export function registerWorker(ctx: PgContext, w: WorkerRecord): Promise<void> {
  return ctx.write(async (tx) => {
    await tx.execute(
      `INSERT INTO ${ctx.t.workers} (id, host, pid, process_start, started_at, heartbeat_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid,
         process_start = EXCLUDED.process_start, started_at = EXCLUDED.started_at,
         heartbeat_at = EXCLUDED.heartbeat_at`,
      [w.id, w.host, w.pid, w.processStart, w.startedAt, w.heartbeatAt],
    );
  });
}

export async function listWorkers(ctx: PgContext, host?: string): Promise<WorkerRecord[]> {
  if (host !== undefined) {
    // The poll's look for dead workers on this host: the lease probe rides along (ExpiryProbe).
    const now = ctx.now();
    const expired = probeExpired(ctx, now);
    expired.catch(() => {});
    probes.set(ctx, { expired, at: now, wall: performance.now() });
  }
  const rows =
    host === undefined
      ? await ctx.read(`SELECT * FROM ${ctx.t.workers} ORDER BY started_at, id`)
      : await ctx.pollRead(`SELECT * FROM ${ctx.t.workers} WHERE host = $1 ORDER BY started_at, id`, [host]);
  return (rows as Parameters<typeof toWorker>[0][]).map(toWorker);
}

export function removeWorkers(ctx: PgContext, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return ctx.write(async (tx) => {
    await tx.execute(`DELETE FROM ${ctx.t.workers} WHERE id = ANY($1::text[])`, [ids]);
  });
}
