/**
 * Group commit for Postgres, the counterpart of the SQLite store's write queue. A store's writes
 * run one transaction at a time, in the order they were issued: writes queued while a transaction
 * is in flight go together into the next one, each inside its own savepoint so a failing write
 * rolls back alone. Callers resolve only after COMMIT.
 *
 * Issue order is part of the Store's semantics, not an optimisation: the runtime queues a claim
 * for the runs it has just created (`ClaimRequest.ids`) without waiting for the create, and a
 * fenced write of an attempt followed by its final transition must not be applied the other way
 * round. Separate concurrent transactions would race; one queue keeps the order while a batch
 * shares one commit (one WAL flush) between many writes. Other processes have their own queue;
 * row locks, SKIP LOCKED and advisory locks keep them apart.
 */
import type pg from 'pg';
import type { BatonEvent, NewEvent } from '../../core/index.ts';
import { execute, RETRYABLE_STATES, select, sqlState } from './sql.ts';

/** An event appended by a write, waiting for its id (drawn when the transaction commits). */
export interface PendingEvent {
  event: NewEvent;
  rootId: string;
  at: number;
  /** The event's data as stored (JSON text). */
  text: string;
}

export class WriteScope {
  /** Events this write appended, in order; they get their ids when the batch commits. */
  readonly events: PendingEvent[] = [];
  /** Filled with the stored events (ids assigned) right before COMMIT. */
  readonly appended: BatonEvent[] = [];
  /** Roots of runs this write created or read: events about them need no lookup. */
  readonly roots = new Map<string, string>();
  /** This write made something due that other processes act on (a timer, a delivery). */
  wake = false;
}

/** One write's view of the transaction. */
export class Tx {
  constructor(
    private readonly client: pg.PoolClient,
    readonly scope: WriteScope,
  ) {}

  select<R>(text: string, values: unknown[] = []): Promise<R[]> {
    return select<R>(this.client, text, values);
  }

  execute(text: string, values: unknown[] = []): Promise<number> {
    return execute(this.client, text, values);
  }
}

export type WriteOp<T> = (tx: Tx) => Promise<T>;

interface Pending {
  op: WriteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Times it was rolled back by a deadlock and queued again. */
  retries: number;
}

interface Done {
  pending: Pending;
  value: unknown;
  scope: WriteScope;
}

/**
 * At most this many writes share a transaction. Every savepoint that writes is a subtransaction,
 * and Postgres keeps only 64 subtransaction ids per backend in shared memory; beyond that every
 * other session's snapshots slow down. 32 stays well inside while amortising the commit.
 */
export const MAX_BATCH = 32;
/** A write that keeps losing deadlocks fails after this many retries. */
const MAX_RETRIES = 5;

export class PgWriteQueue {
  private pending: Pending[] = [];
  private draining: Promise<void> | undefined;
  commits = 0;
  maxBatch = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** Inserts the batch's events (and assigns their ids) just before COMMIT. */
    private readonly flushEvents: (client: pg.PoolClient, scopes: readonly WriteScope[]) => Promise<void>,
    /** Called after each commit with the events it appended. */
    private readonly publish: (events: BatonEvent[], wake: boolean) => void,
  ) {}

  run<T>(op: WriteOp<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        op: op as WriteOp<unknown>,
        resolve: resolve as (v: unknown) => void,
        reject,
        retries: 0,
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
      while (this.pending.length > 0) await this.commitBatch();
    } finally {
      this.draining = undefined;
    }
  }

  private async commitBatch(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      for (const p of this.pending.splice(0)) p.reject(error);
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
    try {
      await this.runBatch(client, batch);
    } catch (error) {
      // The connection is in an unknown state (a query outside any write failed): drop it.
      broken ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /** Runs the batch; throws only when the connection itself failed (every write is settled first). */
  private async runBatch(client: pg.PoolClient, batch: Pending[]): Promise<void> {
    const savepoints = batch.length > 1;
    const done: Done[] = [];
    const failed: Array<{ pending: Pending; error: unknown }> = [];
    let retry: Pending[] = [];
    let index = 0;
    try {
      await client.query('BEGIN');
      for (; index < batch.length; index++) {
        const pending = batch[index] as Pending;
        const scope = new WriteScope();
        if (savepoints) await client.query(index === 0 ? 'SAVEPOINT w' : 'RELEASE SAVEPOINT w; SAVEPOINT w');
        try {
          done.push({ pending, value: await pending.op(new Tx(client, scope)), scope });
        } catch (error) {
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
      await this.flushEvents(
        client,
        done.map((d) => d.scope),
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      for (const d of done) d.pending.reject(error);
      for (const f of failed) f.pending.reject(f.error);
      for (const p of batch.slice(index)) p.reject(error);
      throw error;
    }
    this.commits++;
    this.maxBatch = Math.max(this.maxBatch, done.length + failed.length);
    const [first, ...rest] = retry;
    if (first) this.requeue(first, rest);
    // Settle in issue order, then tell listeners what this commit appended.
    const settled = new Map<Pending, () => void>();
    for (const d of done) settled.set(d.pending, () => d.pending.resolve(d.value));
    for (const f of failed) settled.set(f.pending, () => f.pending.reject(f.error));
    for (const p of batch) settled.get(p)?.();
    const events = done.flatMap((d) => d.scope.appended);
    const wake = done.some((d) => d.scope.wake);
    if (events.length > 0 || wake) this.publish(events, wake);
  }

  /** Puts a write that lost a deadlock back at the head of the queue, with the writes after it. */
  private requeue(write: Pending, after: Pending[]): void {
    write.retries++;
    this.pending.unshift(write, ...after);
  }
}
