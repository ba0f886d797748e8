/**
 * Sync and settle: what the write queue (write-queue.ts) does with a batch once it has committed.
 *
 * A batch's callers resolve, and its events publish, only after a sync that STARTED after its COMMIT
 * has finished: one sync covers every earlier commit (the WAL is append-only between checkpoints).
 * While one sync is in flight, later batches keep committing; they are acknowledged together by the
 * next sync. Batches settle in commit order.
 *
 * Settling is sliced like the queue's transactions. One sync can acknowledge hundreds of writes, and
 * each caller's continuation (the next step of a run, its next write) runs as soon as its promise
 * resolves: all of them at once held the loop for 7-14 ms after a sync, and the deadlines due
 * meanwhile fired that late. A synced group's callers are released through a `Lane`, a slice of
 * them a turn.
 */
import { BatonError, type BatonEvent } from '../../core/index.ts';
import type { Lane } from '../../time/index.ts';
import { type DurableSync, noSync } from './wal-sync.ts';

/** A caller waiting to hear how its write went. */
export interface Caller {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Answered at its COMMIT once every earlier commit is durable (WriteOptions.atCommit). */
  atCommit?: boolean;
  /** Already answered (an atCommit write): its batch's settling skips it. */
  answered?: boolean;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function answer(p: Caller, o: Outcome): void {
  if (o.ok) p.resolve(o.value);
  else p.reject(o.error);
}

/** A batch that committed (or rolled back alone) and waits for a sync to settle its callers. */
export interface Settlement {
  batch: Caller[];
  outcomes: Outcome[];
  events: BatonEvent[];
  /** Its place in commit order (see synced()). */
  seq?: number;
}

export interface CommitSettlerOptions {
  /** Makes commits durable before callers hear of them. */
  durable: DurableSync;
  /** Publishes a settled batch's events. */
  publish: (events: BatonEvent[]) => void;
  /** Releases synced callers a slice a turn (see the header). */
  lane: Lane;
  /** The database file, named by the error of a failed sync. */
  path: string;
  /** Told once a sync failed: the queue rejects the writes it still holds. */
  onBroken: (error: BatonError) => void;
}

export class CommitSettler {
  /** Settled by the next sync to start. */
  private committed: Settlement[] = [];
  /** The sync in flight and the settling of its batches (never rejects). */
  private inFlight: Promise<void> | undefined;
  private syncing: Settlement[] = [];
  private committedSeq = 0;
  private syncedSeq = 0;
  private barriers: Array<{ seq: number; resolve: () => void }> = [];
  /** Steps still waiting in the lane. */
  private unreleased = 0;
  /** A failed sync: what was committed may not be on the disk, so nothing more is acknowledged. */
  private broken_: BatonError | undefined;
  private readonly durable: DurableSync;
  private readonly lane: Lane;
  syncs = 0;

  constructor(private readonly options: CommitSettlerOptions) {
    this.durable = options.durable;
    this.lane = options.lane;
  }

  /** Set once a sync failed (see fail()). */
  get broken(): BatonError | undefined {
    return this.broken_;
  }

  /**
   * Resolves once every commit made so far is durable: a read that passes its answer on (a run's
   * result) waits for it, so it never reports a state a power loss could still undo.
   */
  synced(): Promise<void> {
    if (this.committed.length === 0 && this.syncing.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.barriers.push({ seq: this.committedSeq, resolve }));
  }

  private passBarriers(upTo: number): void {
    this.syncedSeq = Math.max(this.syncedSeq, upTo);
    const open = this.barriers.filter((b) => b.seq > this.syncedSeq);
    for (const b of this.barriers) if (b.seq <= this.syncedSeq) b.resolve();
    this.barriers = open;
  }

  /** Nothing waiting for a sync, no caller waiting to be told. */
  get idle(): boolean {
    return this.committed.length === 0 && this.inFlight === undefined && this.unreleased === 0;
  }

  /**
   * The lowest event id committed that no sync has covered yet. Readers that pass events on (SSE,
   * the timeline) stop below it, so no event leaves the process before it is durable.
   */
  firstUnsyncedEventId(): number | undefined {
    for (const list of [this.syncing, this.committed])
      for (const s of list) if (s.events.length > 0) return s.events[0]?.id;
    return undefined;
  }

  /** Syncs everything committed so far and waits until every caller is told (on close). */
  async drain(): Promise<void> {
    this.startSync();
    while (this.inFlight) await this.inFlight;
    // The lane is FIFO: a turn taken now comes after every caller released so far.
    while (this.unreleased > 0) await this.lane.turn();
  }

  /**
   * Answers the batch's atCommit writes (claims) now if every earlier commit is durable, else once
   * they are (the barrier of the commits so far, taken before this one counts): not after this
   * commit's own sync. A claim thus comes back while that sync runs, and the attempts it starts
   * fill the next commit meanwhile instead of the loop idling on the disk.
   */
  answerAtCommit(batch: Caller[], outcomes: Outcome[]): void {
    const early: Array<{ p: Caller; o: Outcome }> = [];
    batch.forEach((p, i) => {
      if (!p.atCommit) return;
      p.answered = true;
      early.push({ p, o: outcomes[i] as Outcome });
    });
    if (early.length === 0) return;
    const tell = ({ p, o }: { p: Caller; o: Outcome }) => {
      if (this.broken_) p.reject(this.broken_);
      else answer(p, o);
    };
    const nothingUnsynced = this.committed.length === 0 && this.syncing.length === 0;
    if (this.durable === noSync || (nothingUnsynced && this.unreleased === 0)) {
      for (const e of early) tell(e);
      return;
    }
    // After the callers released before them, a slice a turn like them.
    void this.synced().then(() => {
      for (const e of early) this.later(() => tell(e));
    });
  }

  /**
   * Settles a batch that wrote nothing once every commit before it is durable: what it read or
   * answered may rest on them. In commit order, as `synced()` barriers pass after their sync's
   * batches; if that sync failed, it fails with it.
   */
  settleAfterEarlier(s: Settlement): void {
    if (this.durable === noSync) {
      this.settle(s);
      return;
    }
    void this.synced().then(() => {
      if (!this.broken_) this.settleInTurns(s);
      else for (const p of s.batch) p.reject(this.broken_);
    });
  }

  settleAfterSync(s: Settlement): void {
    // Without a sync to wait for (`:memory:`, synchronous NORMAL) a commit is acknowledged at once.
    if (this.durable === noSync) {
      this.settle(s);
      return;
    }
    s.seq = ++this.committedSeq;
    this.committed.push(s);
    this.startSync();
  }

  /** Starts a sync for everything committed so far, unless one is in flight (it starts after). */
  private startSync(): void {
    if (this.inFlight || this.committed.length === 0) return;
    const group = this.committed;
    this.committed = [];
    this.syncing = group;
    this.syncs++;
    this.inFlight = this.durable.sync().then(
      () => {
        this.inFlight = undefined;
        this.syncing = [];
        for (const s of group) this.settleInTurns(s);
        // Barriers pass now: what waits on them and settles callers queues in the lane behind these.
        this.passBarriers(group[group.length - 1]?.seq ?? 0);
        this.startSync();
      },
      (error: unknown) => {
        this.inFlight = undefined;
        this.syncing = [];
        this.fail(group, error);
        // Readers go on (with the error the writes got, the store acknowledges nothing more).
        this.passBarriers(Number.POSITIVE_INFINITY);
      },
    );
  }

  private settle({ batch, outcomes, events }: Settlement): void {
    batch.forEach((p, i) => {
      if (!p.answered) answer(p, outcomes[i] as Outcome);
    });
    if (events.length > 0) this.options.publish(events);
  }

  /**
   * Settles a durable batch a caller a step, through the lane (see the header). Its events publish
   * first, as `settle` publishes them before any caller's continuation runs.
   */
  private settleInTurns({ batch, outcomes, events }: Settlement): void {
    if (events.length > 0) this.later(() => this.options.publish(events));
    batch.forEach((p, i) => {
      if (!p.answered) this.later(() => answer(p, outcomes[i] as Outcome));
    });
  }

  private later(step: () => void): void {
    this.unreleased++;
    this.lane.defer(() => {
      this.unreleased--;
      step();
    });
  }

  /**
   * An fdatasync that fails may have dropped the pages it could not write (Linux forgets them), so a
   * later sync that succeeds proves nothing about them: no write of this process is acknowledged any
   * more. What is on the disk is consistent (the WAL's checksums end at the last good frame); a new
   * process recovers from there, as after a crash.
   */
  private fail(group: Settlement[], cause: unknown): void {
    const path = this.options.path;
    const broken = new BatonError(
      'STORE_UNAVAILABLE',
      `${path}: the write-ahead log could not be synced to the disk (${(cause as Error).message}); this process acknowledges no more writes — restart it`,
      { cause, data: { path } },
    );
    this.broken_ = broken;
    const waiting = [...group, ...this.committed];
    this.committed = [];
    for (const s of waiting) for (const p of s.batch) if (!p.answered) p.reject(broken);
    this.options.onBroken(broken);
  }
}
