/**
 * Group commit. Writes issued in the same turn of the event loop are run in ONE transaction, each
 * inside its own savepoint so a failing write rolls back alone, then committed with one fsync
 * (synchronous=FULL). Callers resolve only after the commit is durable. This is what lets 50
 * concurrent runs share a commit instead of queueing 50 fsyncs.
 *
 * A batch is also a slice of the event loop: better-sqlite3 is synchronous, so a batch of a
 * thousand writes would hold the loop for tens of milliseconds while attempt deadlines and delivery
 * times come due. A transaction therefore takes writes only until `sliceMs` of work is spent, then
 * commits; the rest go in the next turn, after due timers have fired. An fsync is cheap next to a
 * late timeout (≈0.15 ms against the ≤10 ms that protocol 001 allows).
 */
import type Database from 'better-sqlite3';
import type { BatonEvent } from '../../core/index.ts';
import { msUntilNextTimer, sliceBudget, systemClock } from '../../time/index.ts';

export interface WriteScope {
  /** Events appended by this write; published only if the whole batch commits. */
  readonly events: BatonEvent[];
}

interface Pending {
  op: (scope: WriteScope) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Work per transaction before it commits and yields; a single write always goes in whole. */
export const DEFAULT_SLICE_MS = 4;

export class WriteQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  /** Largest batch committed so far (the benchmark reports it). */
  maxBatch = 0;
  commits = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly publish: (events: BatonEvent[]) => void,
    private readonly sliceMs = DEFAULT_SLICE_MS,
    /** How soon a timer is due (tests pass their own). */
    private readonly untilNextTimer: () => number = msUntilNextTimer,
    /** Elapsed time for the slice, from the store's clock: a ManualClock's never runs out. */
    private readonly monotonic: () => number = () => systemClock.monotonic(),
  ) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT w');
    this.release = db.prepare('RELEASE w');
    this.rollbackTo = db.prepare('ROLLBACK TO w');
  }

  run<T>(op: (scope: WriteScope) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ op, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Commits everything queued now, however long it takes (on close). */
  flushAll(): void {
    while (this.pending.length > 0) this.flush();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every write issued in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
      if (this.pending.length > 0) this.schedule();
    });
  }

  /** Commits one slice of the queue. */
  private flush(): void {
    if (this.pending.length === 0) return;
    const started = this.monotonic();
    const budget = sliceBudget(this.sliceMs, this.untilNextTimer);
    const outcomes: Outcome[] = [];
    const events: BatonEvent[] = [];
    try {
      this.begin.run();
    } catch (error) {
      const batch = this.pending;
      this.pending = [];
      for (const p of batch) p.reject(error);
      return;
    }
    let taken = 0;
    try {
      if (this.pending.length === 1) {
        // A write alone needs no savepoint: if it fails, rolling the transaction back is the same
        // as rolling it back to a savepoint and committing nothing — two statements fewer per
        // commit, which is most commits of a sequential caller (a LangGraph step, a lone run).
        taken = 1;
        const alone = this.applyAlone(this.pending[0] as Pending, events);
        if (!alone.ok) {
          if (this.db.inTransaction) this.rollback.run();
          (this.pending.shift() as Pending).reject(alone.error);
          return;
        }
        outcomes.push(alone);
      } else
        do {
          const p = this.pending[taken++] as Pending;
          outcomes.push(this.apply(p, events));
        } while (taken < this.pending.length && this.monotonic() - started < budget);
      this.commit.run();
      this.commits++;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const p of this.pending.splice(0, taken)) p.reject(error);
      return;
    }
    const batch = this.pending.splice(0, taken);
    this.maxBatch = Math.max(this.maxBatch, batch.length);
    batch.forEach((p, i) => {
      const o = outcomes[i] as Outcome;
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
    if (events.length > 0) this.publish(events);
  }

  private applyAlone(p: Pending, events: BatonEvent[]): Outcome {
    const scope: WriteScope = { events: [] };
    try {
      const value = p.op(scope);
      events.push(...scope.events);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private apply(p: Pending, events: BatonEvent[]): Outcome {
    const scope: WriteScope = { events: [] };
    this.savepoint.run();
    try {
      const value = p.op(scope);
      this.release.run();
      events.push(...scope.events);
      return { ok: true, value };
    } catch (error) {
      // SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM and SQLITE_BUSY may roll back the whole
      // transaction, savepoints included: then every write of the batch is gone, and they all fail
      // with this cause (not with a "no such savepoint" from rolling back to one that is gone).
      if (!this.db.inTransaction) throw error;
      this.rollbackTo.run();
      this.release.run();
      return { ok: false, error };
    }
  }
}
