/**
 * A write batch whose last message (its kept statements and COMMIT) was lost with its connection
 * after the transaction's id had arrived (see commit-message.ts): whether it committed is asked
 * of the server, on another connection, by that id (`txid_status`, Postgres 10 and later: what it
 * is for). The write queue then runs the batch again or reports it kept (write-queue.ts).
 */
import type pg from 'pg';
import type { WakeChannel } from '../store.ts';
import { reconnectDelay, UNAVAILABLE_AFTER_MS } from './reconnect.ts';
import { isConnectionLoss } from './sql.ts';

/** Thrown by a batch's try when its last message is in doubt; settled by the queue. */
export class InDoubt<P = unknown> extends Error {
  constructor(
    /** The batch's writes, in issue order. */
    readonly batch: P[],
    /** txid_current() of the transaction, as text. */
    readonly xid: string,
    /** Its server process, to end if the transaction is still running (the session outlived our socket). */
    readonly pid: number | undefined,
    /** The channels its commit would have hinted. */
    readonly channels: readonly WakeChannel[],
    override readonly cause: unknown,
  ) {
    super('the last message of a write batch was lost with its connection');
  }
}

/**
 * 'committed', 'aborted', 'in progress' or 'unknown' (an id too old to tell: never one this young).
 * A transaction still in progress belongs to a session whose client is gone: its backend is told
 * to end (only while it still runs that transaction, so a reused process id is never hit), which
 * aborts it unless its COMMIT was already under way. Throws when the server cannot be reached.
 */
export async function xactStatus(pool: pg.Pool, xid: string, pid: number | undefined): Promise<string> {
  const { rows } = await pool.query<{ status: string | null }>('SELECT txid_status($1::bigint) AS status', [
    xid,
  ]);
  const status = rows[0]?.status ?? 'unknown';
  if (status === 'in progress' && pid !== undefined)
    await pool
      .query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE pid = $1 AND backend_xid::text = ($2::bigint % 4294967296)::text`,
        [pid, xid],
      )
      // Not allowed to (another role's session): it ends by itself once it sees the socket gone.
      .catch(() => undefined);
  return status;
}

/**
 * Asks until the transaction's fate is known: 'committed' or 'aborted'; 'unknown' when the server
 * stays unreachable for UNAVAILABLE_AFTER_MS, answers something other than a fate, or the question
 * itself fails for a reason other than a lost connection. A transaction still in progress has just
 * had its backend told to end, so it is asked again 10 ms later.
 */
export async function settleInDoubt(
  pool: pg.Pool,
  xid: string,
  pid: number | undefined,
  sleep: (ms: number) => Promise<void>,
): Promise<'committed' | 'aborted' | 'unknown'> {
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    let status: string | undefined;
    try {
      status = await xactStatus(pool, xid, pid);
    } catch (error) {
      if (!isConnectionLoss(error)) return 'unknown';
    }
    if (status === 'aborted' || status === 'committed') return status;
    if (status !== undefined && status !== 'in progress') return 'unknown';
    if (waited >= UNAVAILABLE_AFTER_MS) return 'unknown';
    // In progress: its backend was just told to end; unreachable: the server restarts.
    const ms = status === 'in progress' ? 10 : reconnectDelay(attempt);
    await sleep(ms);
    waited += ms;
  }
}
