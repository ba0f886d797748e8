/**
 * Group commit for Postgres, the counterpart of the SQLite store's write queue. A store's writes
 * run one transaction at a time, in the order they were issued: writes queued while a transaction
 * is in flight go together into the next one. Callers resolve only after COMMIT.
 *
 * A failing write must roll back alone. A savepoint around each write does that, at two round trips
 * per write, for writes that almost never fail (a lost lease, a duplicate id, a deadlock). So a
 * batch first runs `fast`: no savepoints, and statements kept and merged into as few round trips as
 * the writes allow (batch-conn.ts); if anything fails, the transaction is rolled back and the batch
 * runs again on the same connection, carefully: each statement sent at once, a savepoint per write.
 * Writes are re-runnable (a batch lost with its connection runs again too).
 *
 * Issue order is part of the Store's semantics, not an optimisation: the runtime queues a claim
 * for the runs it has just created (`ClaimRequest.ids`) without waiting for the create, and a
 * fenced write of an attempt followed by its final transition must not be applied the other way
 * round. Separate concurrent transactions would race; one queue keeps the order while a batch
 * shares one commit (one WAL flush) between many writes. Other processes have their own queue;
 * row locks, SKIP LOCKED and advisory locks keep them apart.
 *
 * A lost connection (a terminated session, a restarted server, a broken socket) never ends the
 * process: a batch that had not reached COMMIT was rolled back by the server, so it runs again, in
 * order, on a new connection after a short backoff (for UNAVAILABLE_AFTER_MS at most, then
 * STORE_UNAVAILABLE).
 * A first try ends in one message — its kept statements, COMMIT and the hints (commit-message.ts):
 * a queued run is one round trip. If that message's answer is lost, the transaction id the batch
 * read with its BEGIN settles it on another connection (in-doubt.ts): aborted, the writes run again
 * like any batch lost before COMMIT; committed, they fail as STORE_UNAVAILABLE saying they were kept.
 * Only a message lost with no id and no word from the server (a network cut that ate the answer)
 * stays in doubt. A careful try sends COMMIT alone, and a lost one stays in doubt. Writes in doubt
 * fail as STORE_UNAVAILABLE: the runtime then leaves the run under its lease and lease recovery
 * continues it from what was kept.
 */
import pg from 'pg';
import { type BatonEvent, isBatonError } from '../../core/index.ts';
import type { WakeChannel } from '../store.ts';
import { BatchConn } from './batch-conn.ts';
import { commit, commitKept } from './commit-message.ts';
import { InDoubt, settleInDoubt } from './in-doubt.ts';
import type { Committing } from './pg-context.ts';
import { reconnectDelay, UNAVAILABLE_AFTER_MS } from './reconnect.ts';
import { isConnectionLoss, RETRYABLE_STATES, sqlState } from './sql.ts';
import type { CommitHint } from './wakeups.ts';
import { AfterCommit, Tx, type WriteOp, WriteScope } from './write-tx.ts';

export { RECONNECT_MAX_MS, UNAVAILABLE_AFTER_MS } from './reconnect.ts';
export { AfterCommit, type PendingEvent, Tx, type WriteOp, WriteScope } from './write-tx.ts';

interface Pending {
  op: WriteOp<unknown>;
  /** Runs this write's transitions lock (so that a batch locks all of them in one statement). */
  locks: readonly string[] | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Times it was rolled back by a deadlock and queued again. */
  retries: number;
  /** Times its batch lost the connection before COMMIT and was queued again. */
  lost: number;
  /** Backoff it has waited through since (ms of the store's clock). */
  waited: number;
}

interface Done {
  pending: Pending;
  value: unknown;
  scope: WriteScope;
}

/**
 * At most this many writes share a transaction. A batch's first try has no savepoints, and its
 * round trips do not grow with its size, so the more writes share it the cheaper each one is.
 */
export const MAX_BATCH = 128;
/**
 * At most this many writes are run again with a savepoint each (the rest wait for the next batch).
 * Every savepoint that writes is a subtransaction, and Postgres keeps only 64 subtransaction ids
 * per backend in shared memory; beyond that every other session's snapshots slow down.
 */
export const MAX_CAREFUL_BATCH = 32;
/** A write that keeps losing deadlocks fails after this many retries. */
const MAX_RETRIES = 5;
export interface WriteQueueHooks {
  /**
   * Inserts the batch's events just before COMMIT; the function it returns, called once committed,
   * gives them their ids (`WriteScope.appended`).
   */
  flushEvents: (batch: BatchConn, scopes: readonly WriteScope[]) => Promise<(() => void) | undefined>;
  /** The channels to notify other processes on after a commit appending `events` (`wake`: something came due). */
  wakeChannels: (events: ReadonlyArray<{ readonly type: string }>, wake: boolean) => WakeChannel[];
  /** Takes those of `channels` whose notification can ride in the COMMIT's message (wakeups.ts). */
  commitHint: (channels: readonly WakeChannel[]) => CommitHint | undefined;
  /** Called after each commit with the events it appended and the channels still to notify. */
  publish: (events: BatonEvent[], channels: readonly WakeChannel[]) => void;
  /** Waits between reconnection attempts (the store's clock). */
  sleep: (ms: number) => Promise<void>;
  /** The error a write gets when its connection could not be kept (STORE_UNAVAILABLE). */
  unavailable: (cause: unknown, committing: Committing) => Error;
}

export class PgWriteQueue {
  private pending: Pending[] = [];
  private draining: Promise<void> | undefined;
  /** Wait before the next batch: its connection was lost (0 once a batch commits). */
  private backoffMs = 0;
  commits = 0;
  maxBatch = 0;
  /** Batches run again on a new connection after theirs was lost before COMMIT. */
  reconnects = 0;
  /** Last messages lost with their connection and settled by their transaction id, by outcome. */
  readonly settled = { committed: 0, aborted: 0, unknown: 0 };

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: WriteQueueHooks,
  ) {}

  /** Queues a write; `locks` names the runs whose transitions it makes (see lockRunTree). */
  run<T>(op: WriteOp<T>, locks?: readonly string[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        op: op as WriteOp<unknown>,
        locks,
        resolve: resolve as (v: unknown) => void,
        reject,
        retries: 0,
        lost: 0,
        waited: 0,
      });
      this.draining ??= this.drain();
    });
  }

  /** Resolves when every write queued so far has committed or failed. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        if (this.backoffMs > 0) await this.hooks.sleep(this.backoffMs);
        await this.commitBatch();
      }
    } finally {
      this.draining = undefined;
    }
  }

  private async commitBatch(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      // Nothing was sent: every queued write can wait for the server and run later.
      this.lostBeforeCommit(this.pending.splice(0), error);
      return;
    }
    // Taken once the connection is ready, so every write issued meanwhile joins this commit.
    const batch = this.pending.splice(0, MAX_BATCH);
    let broken: Error | undefined;
    // A connection lost between two queries is reported as an 'error' event, which would end the
    // process if nobody listened; the next query fails anyway and the batch settles from there.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    let doubt: InDoubt<Pending> | undefined;
    try {
      await this.runBatch(client, batch, () => broken !== undefined, onError);
    } catch (error) {
      if (error instanceof InDoubt) doubt = error as InDoubt<Pending>;
      // The connection is in an unknown state (a query outside any write failed): drop it.
      broken ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
    // On another connection, once this one is back in the pool (a pool of one must not wait on it).
    if (doubt) await this.settle(doubt);
  }

  /**
   * A first try's last message was lost after its transaction id arrived: what became of it is asked
   * before any later write runs (in-doubt.ts). Aborted: nothing was kept, the writes run again in
   * order, as after any connection lost before COMMIT. Committed: the writes were kept but their
   * answers (a claim's runs, events' ids) were lost, so they fail as STORE_UNAVAILABLE saying so, as
   * a lost COMMIT always did. Unknown (the server stayed unreachable): STORE_UNAVAILABLE, in doubt.
   */
  private async settle(d: InDoubt<Pending>): Promise<void> {
    const outcome = await settleInDoubt(this.pool, d.xid, d.pid, this.hooks.sleep);
    this.settled[outcome]++;
    if (outcome === 'aborted') {
      this.lostBeforeCommit(d.batch, d.cause);
      return;
    }
    const error = this.hooks.unavailable(d.cause, outcome === 'committed' ? 'kept' : true);
    for (const p of d.batch) p.reject(error);
    // Other processes may not have heard: the hints ride again, on their own.
    if (outcome === 'committed' && d.channels.length > 0) this.hooks.publish([], d.channels);
  }

  /** Runs the batch; throws only when the connection itself failed (every write is settled or queued first). */
  private async runBatch(
    client: pg.PoolClient,
    batch: Pending[],
    cut: () => boolean,
    broke: (error: Error) => void,
  ): Promise<void> {
    // A write failed and nothing was kept: the batch runs again, each write in its own savepoint (a
    // deadlock loser is then retried after the writes before it commit, as always); writes beyond
    // the savepoint limit wait, in order, at the head of the queue.
    if ((await this.runOnce(client, batch, cut, broke, false)) === 'again') {
      const rest = batch.splice(MAX_CAREFUL_BATCH);
      this.pending.unshift(...rest);
      await this.runOnce(client, batch, cut, broke, true);
    }
  }

  /** One try at the batch; 'again' when a write failed without savepoints (nothing was kept). */
  private async runOnce(
    client: pg.PoolClient,
    batch: Pending[],
    cut: () => boolean,
    broke: (error: Error) => void,
    careful: boolean,
  ): Promise<'again' | undefined> {
    const savepoints = careful && batch.length > 1;
    const done: Done[] = [];
    const failed: Array<{ pending: Pending; error: unknown }> = [];
    let retry: Pending[] = [];
    let index = 0;
    let committing = false;
    let channels: WakeChannel[] = [];
    let hint: CommitHint | undefined;
    let numbered: (() => void) | undefined;
    const conn = new BatchConn(client, !careful, () => batch.slice(index + 1).flatMap((p) => p.locks ?? []));
    try {
      await conn.begin();
      for (; index < batch.length; index++) {
        const pending = batch[index] as Pending;
        const scope = new WriteScope();
        if (savepoints) await client.query(index === 0 ? 'SAVEPOINT w' : 'RELEASE SAVEPOINT w; SAVEPOINT w');
        try {
          done.push({ pending, value: await pending.op(new Tx(conn, scope)), scope });
        } catch (error) {
          // The connection broke under this write: the whole transaction is gone, not this write.
          if (isConnectionLoss(error) || cut()) throw error;
          // Without savepoints nothing can be kept. A write alone in its batch whose own rules
          // refused it fails as it is; any other failure may belong to a statement another write
          // kept for later, so the batch runs again carefully to find out whose it is.
          if (!careful && (batch.length > 1 || !isBatonError(error))) {
            await client.query('ROLLBACK');
            return 'again';
          }
          const state = sqlState(error);
          const again = state !== undefined && RETRYABLE_STATES.has(state) && pending.retries < MAX_RETRIES;
          if (!savepoints) {
            await client.query('ROLLBACK');
            if (again) this.requeue(pending, []);
            else pending.reject(error);
            return;
          }
          await client.query('ROLLBACK TO SAVEPOINT w');
          if (again) {
            // A deadlock with another process: commit what went before (releasing our locks, so
            // the other side can finish), then run this write again, in order, in a new batch.
            retry = batch.slice(index);
            break;
          }
          failed.push({ pending, error });
        }
      }
      const scopes = done.map((d) => d.scope);
      numbered = await this.hooks.flushEvents(conn, scopes);
      channels = this.hooks.wakeChannels(
        scopes.flatMap((s) => s.events.map((e) => e.event)),
        scopes.some((s) => s.wake),
      );
      if (careful) {
        // Everything runs before COMMIT, which goes alone: it is the only statement that can be in
        // doubt when the connection is lost, and a careful try reads no transaction id.
        await conn.flush();
        committing = true;
        hint = this.hooks.commitHint(channels);
        await commit(client, hint, broke);
      } else {
        // A first try ends in one message: what it kept, COMMIT, the hints. A failing statement
        // makes the server skip the rest (COMMIT too); a lost answer is settled by the xid.
        committing = true;
        hint = this.hooks.commitHint(channels);
        await commitKept(conn, hint, broke);
      }
    } catch (error) {
      const lost = isConnectionLoss(error) || cut();
      await client.query('ROLLBACK').catch(() => {});
      if (!careful && !lost) return 'again';
      // A first try's last message: the server ran it up to its transaction id (which arrived),
      // or did not get that far — it reported why (a terminated session: an error from the
      // server itself) before running the rest, so nothing of it can have committed.
      const unsent = committing && !careful && conn.xid === undefined && error instanceof pg.DatabaseError;
      if (lost && (!committing || unsent)) {
        // Nothing of this transaction was kept: run every write of it again, in the same order,
        // on a new connection (a restarted server, a terminated session, a broken socket).
        this.lostBeforeCommit(batch, error);
        throw error;
      }
      if (lost && !careful && conn.xid !== undefined)
        throw new InDoubt<Pending>(batch, conn.xid, pidOf(client), channels, error);
      // A lost COMMIT may or may not have been applied: those writes cannot simply run again.
      const final = committing && lost ? this.hooks.unavailable(error, true) : error;
      for (const d of done) d.pending.reject(final);
      for (const f of failed) f.pending.reject(f.error);
      for (const p of batch.slice(index)) p.reject(final);
      throw error;
    }
    numbered?.();
    this.commits++;
    this.backoffMs = 0;
    this.maxBatch = Math.max(this.maxBatch, done.length + failed.length);
    const [first, ...rest] = retry;
    if (first) this.requeue(first, rest);
    // Settle in issue order, then tell listeners what this commit appended.
    const settled = new Map<Pending, () => void>();
    for (const d of done)
      settled.set(d.pending, () => {
        try {
          d.pending.resolve(d.value instanceof AfterCommit ? d.value.get() : d.value);
        } catch (error) {
          d.pending.reject(error);
        }
      });
    for (const f of failed) settled.set(f.pending, () => f.pending.reject(f.error));
    for (const p of batch) settled.get(p)?.();
    const events = done.flatMap((d) => d.scope.appended);
    const left = channels.filter((c) => !hint?.channels.includes(c));
    if (events.length > 0 || left.length > 0) this.hooks.publish(events, left);
  }

  /**
   * Queues the writes of a batch that never reached COMMIT again, at the head and in issue order,
   * after a backoff; a write that has waited UNAVAILABLE_AFTER_MS through backoffs fails instead.
   */
  private lostBeforeCommit(batch: Pending[], error: unknown): void {
    const again: Pending[] = [];
    for (const p of batch) {
      if (p.waited >= UNAVAILABLE_AFTER_MS) p.reject(this.hooks.unavailable(error, false));
      else {
        p.lost++;
        again.push(p);
      }
    }
    if (again.length === 0) return;
    this.reconnects++;
    const lost = Math.max(...again.map((p) => p.lost));
    this.backoffMs = reconnectDelay(lost);
    for (const p of again) p.waited += this.backoffMs;
    this.pending.unshift(...again);
  }

  /** Puts a write that lost a deadlock back at the head of the queue, with the writes after it. */
  private requeue(write: Pending, after: Pending[]): void {
    write.retries++;
    this.pending.unshift(write, ...after);
  }
}

/** The server process of a pooled connection (from its BackendKeyData). */
function pidOf(client: pg.PoolClient): number | undefined {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' ? pid : undefined;
}
