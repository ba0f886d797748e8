/** Shared plumbing of the Postgres store: the pool, the write queue, fencing and events. */
import type pg from 'pg';
import { BatonError, type BatonEvent, type NewEvent } from '../../core/index.ts';
import type { Clock } from '../../time/index.ts';
import type { Fence } from '../records.ts';
import { json, type RunRow } from '../rows.ts';
import { leaseLost, runNotFound } from '../run-rules.ts';
import type { EventListener, WakeChannel } from '../store.ts';
import type { BatchConn } from './batch-conn.ts';
import { fenceCheck } from './merged-writes.ts';
import { PollReads } from './poll-reads.ts';
import { LOCK_EVENTS, quoteIdent, select, type Tables } from './sql.ts';
import type { PgWakeups } from './wakeups.ts';
import { PgWriteQueue, type Tx, type WriteOp, type WriteScope } from './write-queue.ts';

/**
 * Events after which another process may have something to do: a run became claimable, a question
 * was answered, a result or notice was queued for delivery, a run was cancelled (its worker aborts).
 */
const WORK_EVENTS: ReadonlySet<string> = new Set([
  'run:created',
  'run:queued',
  'run:waiting',
  'run:resumed',
  'run:cancelled',
  'attempt:retrying',
  'decision:made',
  'tool:result',
  'tool:choice',
]);

export class PgContext {
  readonly queue: PgWriteQueue;
  /** Cross-process hints (set by the store unless wake-ups are off). */
  wakeups: PgWakeups | undefined;
  private readonly listeners = new Set<EventListener>();
  // A run's root never changes, so it can be cached forever (bounded to keep memory flat).
  private readonly roots = new Map<string, string>();
  /** The poll's statements, coalesced per turn. */
  readonly pollReads: PollReads;
  /** The events id sequence, as a regclass literal passed as a parameter. */
  private readonly eventsSequence: string;

  constructor(
    readonly pool: pg.Pool,
    readonly t: Tables,
    readonly clock: Clock,
    readonly defaultTtlMs: number,
    /** Where the database is (no password), for messages. */
    readonly location: string,
  ) {
    this.eventsSequence = `${quoteIdent(t.schema)}.events_id_seq`;
    this.pollReads = new PollReads(pool);
    this.queue = new PgWriteQueue(pool, {
      flushEvents: (batch, scopes) => this.flushEvents(batch, scopes),
      wakeChannels: (events, wake) => this.wakeChannels(events, wake),
      commitHint: (channels) => this.wakeups?.forCommit(channels),
      publish: (events, channels) => this.publish(events, channels),
      sleep: (ms) => clock.sleep(ms),
      unavailable: (cause, committing) => storeUnavailable(location, cause, committing),
    });
  }

  /** Queues a write; `locks` names the runs it transitions (locked together with the batch's others). */
  write<T>(op: WriteOp<T>, locks?: readonly string[]): Promise<T> {
    return this.queue.run(op, locks);
  }

  /** A read outside any transaction (it sees what has committed). */
  read<R>(text: string, values: unknown[] = []): Promise<R[]> {
    return select<R>(this.pool, text, values);
  }

  /**
   * A statement of a worker's poll, atomic by itself, outside the write queue: those asked for in
   * the same turn share one round trip (poll-reads.ts). Past `timeoutMs` (real time) node-postgres
   * fails it and the pool drops its connection.
   */
  pollRead<R>(text: string, values: unknown[] = [], timeoutMs?: number): Promise<R[]> {
    return this.pollReads.read<R>(text, values, timeoutMs);
  }

  /** pollRead, each row as an array of its values in column order (`rowMode: 'array'`). */
  pollReadArrays(text: string, values: unknown[] = []): Promise<unknown[][]> {
    return this.pollReads.read<unknown[]>(text, values, undefined, true);
  }

  now(): number {
    return this.clock.now();
  }

  onEvents(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The channels other processes are told about after a commit that appends events of these types. */
  private wakeChannels(events: ReadonlyArray<{ readonly type: string }>, wake: boolean): WakeChannel[] {
    if (!this.wakeups) return [];
    const channels: WakeChannel[] = [];
    if (events.length > 0) channels.push('events');
    if (wake || events.some((e) => WORK_EVENTS.has(e.type))) channels.push('work');
    return channels;
  }

  /** After a commit: hints on the channels its message did not carry, then this process's listeners. */
  private publish(events: BatonEvent[], channels: readonly WakeChannel[]): void {
    // Hints for other processes first: this process's listeners may take a while.
    for (const c of channels) this.wakeups?.notify(c);
    if (events.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(events);
      } catch {
        // A listener's bug must not break the writer that committed.
      }
    }
  }

  rememberRoot(runId: string, rootId: string): void {
    if (this.roots.size > 50_000) this.roots.clear();
    this.roots.set(runId, rootId);
  }

  cachedRoot(runId: string): string | undefined {
    return this.roots.get(runId);
  }

  forgetRoots(): void {
    this.roots.clear();
  }

  /** Queues events in the write's scope; they are stored, with their ids, when the batch commits. */
  async appendEvents(tx: Tx, events: readonly NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    const known = (id: string) => tx.scope.roots.get(id) ?? this.roots.get(id);
    const unknown = [...new Set(events.map((e) => e.runId).filter((id) => known(id) === undefined))];
    if (unknown.length > 0) {
      const rows = await tx.select<{ id: string; root_id: string }>(
        `SELECT id, root_id FROM ${this.t.runs} WHERE id = ANY($1::text[])`,
        [unknown],
        'none',
      );
      for (const r of rows) this.rememberRoot(r.id, r.root_id);
    }
    const at = this.now();
    for (const event of events) {
      const rootId = known(event.runId);
      if (rootId === undefined)
        throw new BatonError('RUN_NOT_FOUND', `no run with id ${event.runId}`, {
          data: { runId: event.runId },
        });
      tx.scope.events.push({ event, rootId, at, text: json(event.data) });
    }
  }

  /**
   * Inserts the batch's events right before COMMIT. Event ids must grow in commit order, or a
   * reader paging with `afterId` skips an event whose transaction committed after a later id's:
   * the ids are drawn under an advisory lock (one per schema) held until COMMIT, so transactions
   * that append events take their ids one after another. The lock is taken last and nothing that
   * waits on another lock follows it, so it cannot deadlock; transactions without events skip it.
   */
  private async flushEvents(
    batch: BatchConn,
    scopes: readonly WriteScope[],
  ): Promise<(() => void) | undefined> {
    const pending = scopes.flatMap((s) => s.events);
    if (pending.length === 0) return undefined;
    await batch.later('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_EVENTS, this.t.schema], 'none');
    // One contiguous block of ids, reserved while the lock is held, numbered in append order. In a
    // first try the insert goes with the COMMIT; its ids are read once the message has answered.
    const inserted = await batch.laterQuery<{ id: number }>(
      `WITH block AS (SELECT setval($1::regclass, nextval($1::regclass) + $2 - 1) AS last)
       INSERT INTO ${this.t.events} (id, run_id, root_id, type, at, data)
       SELECT block.last - $2 + e.n, e.run_id, e.root_id, e.type, e.at, e.data
       FROM block, unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
         WITH ORDINALITY AS e(run_id, root_id, type, at, data, n)
       RETURNING id`,
      [
        this.eventsSequence,
        pending.length,
        pending.map((p) => p.event.runId),
        pending.map((p) => p.rootId),
        pending.map((p) => p.event.type),
        pending.map((p) => p.at),
        pending.map((p) => p.text),
      ],
      'none',
    );
    return () => {
      let id = inserted.rows.reduce((min, r) => Math.min(min, r.id), Number.POSITIVE_INFINITY);
      for (const scope of scopes)
        for (const p of scope.events)
          scope.appended.push({
            id: id++,
            runId: p.event.runId,
            rootId: p.rootId,
            type: p.event.type,
            at: p.at,
            data: p.event.data,
          });
    };
  }

  /**
   * Throws LEASE_LOST unless the run is running under this token and claim (Fence.claim), and
   * locks the row until COMMIT (FOR NO KEY UPDATE, the lock an UPDATE of the row takes): no claim or
   * recovery can take the run while this write is applied. A lock, not a write: it used to set
   * updated_at, a new version of the row (and its WAL) for every fenced write; SQLite's check is a
   * read too.
   * In a batch's first try the check goes with the batch's next round trip, merged with the
   * batch's other fence checks, and fails the statement when a fence does not hold; the batch then
   * runs again carefully, where each check is sent at once and throws LEASE_LOST.
   */
  async checkFence(tx: Tx, fence: Fence): Promise<void> {
    if (tx.fast) {
      await tx.laterRows(
        fenceCheck(this.t),
        [[fence.runId, fence.token, fence.claim ?? null]],
        [fence.runId],
        'none',
      );
      return;
    }
    const held = await tx.select(
      `SELECT 1 FROM ${this.t.runs}
       WHERE id = $1 AND lease_token = $2 AND lease_claim IS NOT DISTINCT FROM $3 AND status = 'running'
       FOR NO KEY UPDATE`,
      [fence.runId, fence.token, fence.claim ?? null],
      'none',
    );
    if (held.length === 1) return;
    const [row] = await tx.select<Pick<RunRow, 'status' | 'lease_token' | 'lease_owner'>>(
      `SELECT status, lease_token, lease_owner FROM ${this.t.runs} WHERE id = $1`,
      [fence.runId],
      'none',
    );
    throw fenceError(fence, row);
  }
}

/** Where a lost connection left a write: before COMMIT (false), in doubt (true), or known committed. */
export type Committing = boolean | 'kept';

/**
 * The database could not be reached or the connection broke: STORE_UNAVAILABLE (HTTP 503), as
 * SQLite reports a full disk. The runtime keeps the run under its lease and retries after it.
 */
export function storeUnavailable(
  location: string,
  cause: unknown,
  committing: Committing = false,
): BatonError {
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new BatonError(
    'STORE_UNAVAILABLE',
    committing === 'kept'
      ? `${location}: the connection was lost after COMMIT (${message}); the write was kept, its answer was lost`
      : committing
        ? `${location}: the connection was lost during COMMIT (${message}); the write may or may not have been kept`
        : `${location} cannot be reached (${message}); nothing of the failed write was kept`,
    { cause, data: { location, ...(typeof code === 'string' ? { pgCode: code } : {}) } },
  );
}

export function fenceError(
  fence: Fence,
  row: Pick<RunRow, 'status' | 'lease_token' | 'lease_owner'> | undefined,
): BatonError {
  if (!row) return runNotFound(fence.runId);
  return leaseLost(fence.runId, fence.token, {
    status: row.status,
    leaseToken: row.lease_token,
    leaseOwner: row.lease_owner,
  });
}
