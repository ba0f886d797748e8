/** Shared plumbing of the SQLite store: the statement cache, the write queue, fencing and events. */
import type Database from 'better-sqlite3';
import { BatonError, type BatonEvent, type NewEvent } from '../../core/index.ts';
import type { Clock } from '../../time/index.ts';
import type { Fence } from '../records.ts';
import { json, type RunRow } from '../rows.ts';
import { leaseLost, runNotFound } from '../run-rules.ts';
import type { EventListener } from '../store.ts';
import type { DurableSync } from './wal-sync.ts';
import { type WriteOptions, WriteQueue, type WriteScope } from './write-queue.ts';

export { DEFAULT_TTL_MS } from '../run-rules.ts';

/**
 * Events per INSERT statement. A statement per event cost ≈ 3 µs each, and a no-op run appends
 * five, two at a time; `appendEvents` of at most this many is ONE statement (WriteOptions.atomic).
 */
export const EVENTS_PER_INSERT = 8;

export class SqliteContext {
  readonly queue: WriteQueue;
  private readonly statements = new Map<string, Database.Statement>();
  /** Statements that return rows as arrays (`rawStmt`), apart: raw mode is a statement's state. */
  private readonly rawStatements = new Map<string, Database.Statement>();
  private readonly listeners = new Set<EventListener>();
  // A run's root never changes, so it can be cached forever (bounded to keep memory flat).
  private readonly roots = new Map<string, string>();

  constructor(
    readonly db: Database.Database,
    readonly clock: Clock,
    readonly defaultTtlMs: number,
    durable: DurableSync,
    afterCommit?: () => void,
  ) {
    // The slice is measured on the store's clock: under a ManualClock, tests get one commit per
    // turn however loaded the machine is, instead of a 4 ms wall-clock slice.
    this.queue = new WriteQueue(db, (events) => this.publish(events), {
      untilNextTimer: () => clock.msUntilNextTimer?.() ?? Number.POSITIVE_INFINITY,
      monotonic: () => clock.monotonic(),
      durable,
      ...(afterCommit ? { afterCommit } : {}),
    });
  }

  stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** A statement whose rows come back as arrays of column values (see run-row.ts). */
  rawStmt(sql: string): Database.Statement {
    let s = this.rawStatements.get(sql);
    if (!s) {
      s = this.db.prepare(sql).raw(true);
      this.rawStatements.set(sql, s);
    }
    return s;
  }

  write<T>(op: (scope: WriteScope) => T, options?: WriteOptions): Promise<T> {
    return this.queue.run(op, options);
  }

  now(): number {
    return this.clock.now();
  }

  onEvents(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private publish(events: BatonEvent[]): void {
    for (const l of this.listeners) {
      try {
        l(events);
      } catch {
        // A listener's bug must not break the writer that committed.
      }
    }
  }

  rootOf(runId: string): string {
    const cached = this.roots.get(runId);
    if (cached) return cached;
    const row = this.stmt('SELECT root_id FROM runs WHERE id = ?').get(runId) as
      | { root_id: string }
      | undefined;
    if (!row) throw new BatonError('RUN_NOT_FOUND', `no run with id ${runId}`, { data: { runId } });
    this.knowRoot(runId, row.root_id);
    return row.root_id;
  }

  /** The root of a run read in a write (a claim): its events need not read it again. */
  knowRoot(runId: string, rootId: string): void {
    if (this.roots.size > 50_000) this.roots.clear();
    this.roots.set(runId, rootId);
  }

  forgetRoots(): void {
    this.roots.clear();
  }

  /** `created`: the roots of runs this write inserted (not cached: the write may still roll back). */
  appendEvents(
    scope: WriteScope,
    events: readonly NewEvent[],
    created?: ReadonlyMap<string, string>,
  ): BatonEvent[] {
    if (events.length === 0) return [];
    const at = this.now();
    // What can fail in JavaScript (an unknown run, data that is not JSON) fails before any INSERT.
    const roots = events.map((e) => created?.get(e.runId) ?? this.rootOf(e.runId));
    const data = events.map((e) => json(e.data));
    const out: BatonEvent[] = [];
    for (let from = 0; from < events.length; from += EVENTS_PER_INSERT) {
      const n = Math.min(EVENTS_PER_INSERT, events.length - from);
      const values: unknown[] = [];
      for (let i = from; i < from + n; i++) {
        const e = events[i] as NewEvent;
        values.push(e.runId, roots[i], e.type, at, data[i]);
      }
      // One statement gives its rows consecutive ids (no other writer meanwhile: the transaction
      // holds the write lock), the last of them lastInsertRowid.
      const last = Number(this.insertEvents(n).run(...values).lastInsertRowid);
      for (let i = from; i < from + n; i++) {
        const e = events[i] as NewEvent;
        out.push({
          id: last - (from + n - 1 - i),
          runId: e.runId,
          rootId: roots[i] as string,
          type: e.type,
          at,
          data: e.data,
        });
      }
    }
    scope.events.push(...out);
    return out;
  }

  /** The INSERT of `n` events in one statement (a run's writes append them two at a time). */
  private insertEvents(n: number): Database.Statement {
    return this.stmt(
      `INSERT INTO events (run_id, root_id, type, at, data) VALUES ${Array.from({ length: n }, () => '(?, ?, ?, ?, ?)').join(', ')}`,
    );
  }

  /**
   * Throws LEASE_LOST unless the run is running under this token. A read, not an UPDATE: every write
   * runs inside the write queue's BEGIN IMMEDIATE, which holds the database's write lock to COMMIT, so
   * nothing can take the lease between this check and the write it guards; the UPDATE that touched
   * `updated_at` wrote the run's row (a WAL page) once more per attempt for nothing read it.
   */
  checkFence(fence: Fence): void {
    const row = this.stmt('SELECT status, lease_token, lease_owner FROM runs WHERE id = ?').get(
      fence.runId,
    ) as Pick<RunRow, 'status' | 'lease_token' | 'lease_owner'> | undefined;
    if (!row) throw runNotFound(fence.runId);
    if (row.status === 'running' && row.lease_token === fence.token) return;
    throw leaseLost(fence.runId, fence.token, {
      status: row.status,
      leaseToken: row.lease_token,
      leaseOwner: row.lease_owner,
    });
  }
}
