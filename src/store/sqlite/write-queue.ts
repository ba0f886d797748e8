/**
 * Group commit. Writes issued in the same turn of the event loop are run in ONE transaction, each
 * inside its own savepoint so a failing write rolls back alone, then committed. This is what lets 50
 * concurrent runs share a commit instead of queueing 50 commits.
 *
 * Durability does not block the loop: the connection commits at synchronous=NORMAL (in WAL mode the
 * COMMIT only write()s WAL frames), then `DurableSync` fdatasyncs the WAL on libuv's thread pool.
 * A batch's callers resolve, and its events publish, only after a sync that STARTED after its COMMIT
 * has finished; while one sync is in flight, later batches keep committing. Batches settle in commit
 * order, a slice of their callers a turn: commit-settler.ts, which says why.
 *
 * A batch is also a slice of the event loop: better-sqlite3 is synchronous, so a batch of a
 * thousand writes would hold the loop for tens of milliseconds while attempt deadlines and delivery
 * times come due. A transaction therefore takes writes only until `sliceMs` of work is spent, then
 * commits; the rest go in the next turn, after due timers have fired.
 */
import type Database from 'better-sqlite3';
import type { BatonEvent } from '../../core/index.ts';
import { DEFAULT_LANE_SLICE_MS, Lane, msUntilNextTimer, sliceBudget, systemClock } from '../../time/index.ts';
import { type Caller, CommitSettler, type Outcome } from './commit-settler.ts';
import { type DurableSync, noSync } from './wal-sync.ts';

export interface WriteScope {
  /** Events appended by this write; published only if the whole batch commits. */
  readonly events: BatonEvent[];
  /** Told how long the COMMIT that took this write held the loop (ms; a sweep learns from it). */
  onCommit?: (commitMs: number) => void;
}

interface Pending extends Caller {
  op: (scope: WriteScope) => unknown;
  /** Changes the database with at most one statement (WriteOptions.atomic): no savepoint. */
  atomic?: boolean;
}

export interface WriteOptions {
  /**
   * Answer this write once its COMMIT is done and every EARLIER commit is durable, without waiting
   * for the sync of its own commit (which still happens, and still gates its events). For a claim
   * (claims.ts): a crash can lose an unsynced commit only with the machine, and with it every
   * process that could have acted on it; whatever the claimed attempt writes commits later, and the
   * sync that makes that durable covers the claim too (the WAL is append-only). What the attempt
   * reads was durable before it started, except what its claim's own transaction wrote.
   */
  atCommit?: boolean;
  /**
   * The write changes the database with at most ONE statement, after whatever it reads: SQLite
   * undoes a failing statement by itself (the transaction goes on), so the write fails alone
   * without a savepoint of its own — two statements fewer (a run's `attempt:started`).
   */
  atomic?: boolean;
}

/** Work per transaction before it commits and yields; a single write always goes in whole. */
export const DEFAULT_SLICE_MS = 4;

export interface WriteQueueOptions {
  /** @default DEFAULT_SLICE_MS */
  sliceMs?: number;
  /** How soon a timer is due (tests pass their own). */
  untilNextTimer?: () => number;
  /** Elapsed time for the slice, from the store's clock: a ManualClock's never runs out. */
  monotonic?: () => number;
  /** Makes commits durable before callers hear of them. @default noSync */
  durable?: DurableSync;
  /** Told of every commit (the checkpointer counts them). */
  afterCommit?: () => void;
}

export class WriteQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  /** Syncs what commits and settles its callers, in commit order. */
  private readonly settler: CommitSettler;
  /** Writes are held while this is set (pauseUntil). */
  private paused: Promise<void> | undefined;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  private readonly totalChanges: Database.Statement;
  /** total_changes() after the last transaction: the next one changed rows if it moved. */
  private changesSeen: number;
  private readonly sliceMs: number;
  private readonly untilNextTimer: () => number;
  private readonly monotonic: () => number;
  private readonly afterCommit: () => void;
  /** The onCommit hooks of the writes in the transaction being built. */
  private commitHooks: Array<(commitMs: number) => void> = [];
  /** Largest batch committed so far (the benchmark reports it). */
  maxBatch = 0;
  /**
   * How long transactions held the event loop, BEGIN to COMMIT or ROLLBACK (ms, the store's clock;
   * wall time, so a thread the kernel preempted meanwhile shows the wait too): the last one, the
   * longest so far, and how many held it longer than the slice (a single large write may).
   */
  readonly holds = { lastMs: 0, maxMs: 0, overSlice: 0 };
  commits = 0;
  /** Transactions begun so far: writes that read the same number run in the same transaction. */
  transactions = 0;

  constructor(
    private readonly db: Database.Database,
    publish: (events: BatonEvent[]) => void,
    options: WriteQueueOptions = {},
  ) {
    this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    this.untilNextTimer = options.untilNextTimer ?? msUntilNextTimer;
    this.monotonic = options.monotonic ?? (() => systemClock.monotonic());
    this.afterCommit = options.afterCommit ?? (() => {});
    this.settler = new CommitSettler({
      durable: options.durable ?? noSync,
      publish,
      lane: new Lane(Math.min(this.sliceMs, DEFAULT_LANE_SLICE_MS), this.untilNextTimer, this.monotonic),
      path: db.name,
      onBroken: (error) => {
        for (const p of this.pending.splice(0)) p.reject(error);
      },
    });
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT w');
    this.release = db.prepare('RELEASE w');
    this.rollbackTo = db.prepare('ROLLBACK TO w');
    this.totalChanges = db.prepare('SELECT total_changes()').pluck();
    this.changesSeen = this.totalChanges.get() as number;
  }

  /** WAL syncs started so far. */
  get syncs(): number {
    return this.settler.syncs;
  }

  run<T>(op: (scope: WriteScope) => T, options?: WriteOptions): Promise<T> {
    if (this.settler.broken) return Promise.reject(this.settler.broken);
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { op, resolve: resolve as (v: unknown) => void, reject };
      if (options?.atCommit) p.atCommit = true;
      if (options?.atomic) p.atomic = true;
      this.pending.push(p);
      this.schedule();
    });
  }

  /**
   * Keeps queued writes from committing until `until` settles (the checkpointer catching up). The
   * event loop is not held: writes wait in the queue and go in one batch afterwards.
   */
  pauseUntil(until: Promise<void>): void {
    // Held until every pause so far has ended (the checkpointer's and a sweep's may overlap).
    const noop = () => {};
    const paused = Promise.all([this.paused, until]).then(noop, noop);
    this.paused = paused;
    void paused.then(() => {
      if (this.paused !== paused) return;
      this.paused = undefined;
      if (this.pending.length > 0) this.schedule();
    });
  }

  /**
   * Runs `work` (another connection's write: a sweep on its thread) with this queue's writes held,
   * once no other pause holds them: SQLite has one writer, and a write of this connection meeting the
   * other's lock would wait for it on the event loop. Writes queued meanwhile go in one batch after.
   */
  async holdWrites<T>(work: () => Promise<T>): Promise<T> {
    while (this.paused) await this.paused;
    let release = () => {};
    this.pauseUntil(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Resolves once every commit made so far is durable: a read that passes its answer on (a run's
   * result) waits for it, so it never reports a state a power loss could still undo.
   */
  synced(): Promise<void> {
    return this.settler.synced();
  }

  /** Nothing queued, nothing waiting for a sync, no caller waiting to be told. */
  get idle(): boolean {
    return this.pending.length === 0 && this.settler.idle;
  }

  /**
   * The lowest event id this connection committed that no sync has covered yet. Readers that pass
   * events on (SSE, the timeline) stop below it, so no event leaves the process before it is durable.
   */
  firstUnsyncedEventId(): number | undefined {
    return this.settler.firstUnsyncedEventId();
  }

  /** Commits everything queued now, however long it takes, and waits until it is durable (on close). */
  async drain(): Promise<void> {
    while (this.paused) await this.paused;
    while (this.pending.length > 0) this.flush();
    await this.settler.drain();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every write issued in this turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      // Held: the end of the pause schedules the next flush.
      if (this.paused) return;
      this.flush();
      if (this.pending.length > 0) this.schedule();
    });
  }

  /** Commits one slice of the queue; its callers settle after the next sync. */
  private flush(): void {
    const began = this.transactions;
    const started = this.monotonic();
    try {
      this.flushSlice(started);
    } finally {
      if (this.transactions !== began) this.noteHold(this.monotonic() - started);
    }
  }

  private noteHold(ms: number): void {
    this.holds.lastMs = ms;
    if (ms > this.holds.maxMs) this.holds.maxMs = ms;
    if (ms > this.sliceMs) this.holds.overSlice++;
  }

  private flushSlice(started: number): void {
    if (this.pending.length === 0) return;
    const broken = this.settler.broken;
    if (broken) {
      for (const p of this.pending.splice(0)) p.reject(broken);
      return;
    }
    const budget = sliceBudget(this.sliceMs, this.untilNextTimer);
    const outcomes: Outcome[] = [];
    const events: BatonEvent[] = [];
    this.commitHooks = [];
    try {
      this.begin.run();
      this.transactions++;
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
          // Its error may rest on commits not yet synced: it is answered after them, in order.
          this.settler.settleAfterEarlier({
            batch: this.pending.splice(0, 1),
            outcomes: [alone],
            events: [],
          });
          return;
        }
        outcomes.push(alone);
      } else
        do {
          const p = this.pending[taken++] as Pending;
          outcomes.push(this.apply(p, events));
        } while (taken < this.pending.length && this.monotonic() - started < budget);
      const before = this.monotonic();
      this.commit.run();
      const commitMs = this.monotonic() - before;
      this.commits++;
      this.afterCommit();
      for (const hook of this.commitHooks) hook(commitMs);
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const p of this.pending.splice(0, taken)) p.reject(error);
      return;
    }
    const batch = this.pending.splice(0, taken);
    this.maxBatch = Math.max(this.maxBatch, batch.length);
    this.settler.answerAtCommit(batch, outcomes);
    // A transaction that changed no row (a claim that found nothing, an idle worker's chores)
    // wrote nothing to the WAL: there is nothing of its own to sync. Before, every one of them
    // had an fdatasync: an idle process synced ~4 times a second, one per poll. One statement a
    // commit: the count it is compared with is the last commit's (a change on this connection
    // outside the queue in between makes this one sync, which is only ever safe).
    const changes = this.totalChanges.get() as number;
    const wrote = changes !== this.changesSeen;
    this.changesSeen = changes;
    if (wrote) this.settler.settleAfterSync({ batch, outcomes, events });
    else this.settler.settleAfterEarlier({ batch, outcomes, events });
  }

  /** A write of at most one changing statement: a failure left nothing of it to roll back. */
  private applyAtomic(p: Pending, events: BatonEvent[]): Outcome {
    const outcome = this.applyAlone(p, events);
    // Unless the failure took the whole transaction with it (SQLITE_FULL, SQLITE_IOERR: see apply).
    if (!outcome.ok && !this.db.inTransaction) throw outcome.error;
    return outcome;
  }

  private applyAlone(p: Pending, events: BatonEvent[]): Outcome {
    const scope: WriteScope = { events: [] };
    try {
      const value = p.op(scope);
      events.push(...scope.events);
      if (scope.onCommit) this.commitHooks.push(scope.onCommit);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private apply(p: Pending, events: BatonEvent[]): Outcome {
    if (p.atomic) return this.applyAtomic(p, events);
    const scope: WriteScope = { events: [] };
    this.savepoint.run();
    try {
      const value = p.op(scope);
      this.release.run();
      events.push(...scope.events);
      if (scope.onCommit) this.commitHooks.push(scope.onCommit);
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
