/**
 * Group commit. Writes issued in the same turn of the event loop are run in ONE transaction, each
 * inside its own savepoint so a failing write rolls back alone, then committed with one fsync
 * (synchronous=FULL). Callers resolve only after the commit is durable. This is what lets 50
 * concurrent runs share a commit instead of queueing 50 fsyncs.
 */
import type Database from 'better-sqlite3';
import type { BatonEvent } from '../../core/index.ts';

export interface WriteScope {
  /** Events appended by this write; published only if the whole batch commits. */
  readonly events: BatonEvent[];
}

interface Pending {
  op: (scope: WriteScope) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

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
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now (also used on close). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.maxBatch = Math.max(this.maxBatch, batch.length);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const events: BatonEvent[] = [];
    try {
      this.begin.run();
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    try {
      for (const p of batch) {
        const scope: WriteScope = { events: [] };
        this.savepoint.run();
        try {
          const value = p.op(scope);
          this.release.run();
          events.push(...scope.events);
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.rollbackTo.run();
          this.release.run();
          outcomes.push({ ok: false, error });
        }
      }
      this.commit.run();
      this.commits++;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o?.ok) p.resolve(o.value);
      else p.reject(o?.error);
    });
    if (events.length > 0) this.publish(events);
  }
}
