/** The worker's heartbeat on Postgres: its row refreshed and its leases extended, within a bound. */
import { BatonError } from '../../core/index.ts';
import type { PgContext } from './pg-context.ts';
import { settleWithin } from './settle-within.ts';
import { sqlState } from './sql.ts';

/** lock_not_available: lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * One statement, atomic by itself and appending no events, sent at once outside the write queue (a
 * process heartbeats every third of a lease: round trips are an idle one's load). A run locked
 * right now is skipped (SKIP LOCKED): a write of its own process holds it, most likely its end, and
 * the next beat, a third of a lease later, extends it if it still runs; waiting instead could
 * deadlock with this process's own write batch. The final SELECT reads owner and status, which the
 * lease extension does not change. A beat with no answer within a third of a lease fails
 * (settleWithin): hanging, it kept the worker from stopping attempts whose leases were ending, and
 * they ran on beside whoever took their runs over. Failing on the client alone left the statement
 * waiting on its connection and in the server, and it committed once the lock went: so the wait for
 * the worker's row lock is bounded on the server too (lock_timeout, set by the statement itself for
 * its own transaction before the row is locked), and the query carries the bound to node-postgres
 * (query_timeout), which fails it there and has the pool end a connection that does not answer (a
 * dead socket) instead of lending it again. The server's wait is four fifths of the bound: a lock wait then ends as the server's error, its connection intact, and the first
 * failed beat (answered at 0.6 of a lease from the last renewal) still finds the leases ending within
 * half a lease. In a message shared with other poll statements it fails them all and each is sent
 * again alone: the client's bound answers first, and the server still cancels the statement.
 */
export async function heartbeat(
  ctx: PgContext,
  owner: string,
  leaseMs: number,
  active: readonly string[],
): Promise<string[]> {
  const now = ctx.now();
  const bound = Math.max(50, Math.floor(leaseMs / 3));
  const lockWait = Math.max(10, Math.floor((bound * 4) / 5));
  const beat = ctx.pollRead<{ id: string }>(
    `WITH beat AS (UPDATE ${ctx.t.workers} SET heartbeat_at = $1
       WHERE id = $2 AND set_config('lock_timeout', $5, true) IS NOT NULL),
     extended AS (UPDATE ${ctx.t.runs} SET lease_expires_at = $3
       WHERE id IN (SELECT id FROM ${ctx.t.runs} WHERE id = ANY($4::text[]) AND lease_owner = $2
                      AND status = 'running' ORDER BY id FOR UPDATE SKIP LOCKED))
     -- In creation order, as the SQLite store lists them.
     SELECT id FROM ${ctx.t.runs} WHERE lease_owner = $2 AND status = 'running' ORDER BY created_seq`,
    [now, owner, now + leaseMs, active, `${lockWait}ms`],
    bound,
  );
  let rows: Array<{ id: string }>;
  try {
    rows = await settleWithin(beat, bound, `the heartbeat of ${owner}`);
  } catch (err) {
    if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
    throw new BatonError(
      'STORE_UNAVAILABLE',
      `the heartbeat of ${owner} waited ${lockWait} ms for its worker row, locked by another transaction`,
      { cause: err },
    );
  }
  return rows.map((r) => r.id);
}
