/**
 * The SQLite store's connection and what works beside it off the event loop: the WAL's fdatasync
 * (wal-sync.ts), the checkpointer thread (checkpointer.ts) and the sweeper thread (sweeper.ts).
 * Opened together, their figures read together, closed in order.
 */
import { type Clock, systemClock } from '../../time/index.ts';
import { type Checkpointer, walCheckpointer } from './checkpointer.ts';
import { sqliteDriver } from './driver.ts';
import { type OpenOptions, openDatabase } from './open-database.ts';
import { DEFAULT_TTL_MS, SqliteContext } from './sqlite-context.ts';
import { sweepCommitWeight } from './sweep-plan.ts';
import { type Sweeper, threadSweeper } from './sweeper.ts';
import { type DurableSync, databaseFile, noSync, walSync } from './wal-sync.ts';

export interface SqliteStoreOptions extends OpenOptions {
  /** @default systemClock */
  clock?: Clock;
  /** How long finished runs are kept when they carry no TTL of their own. @default 24 h */
  defaultTtlMs?: number;
}

export class StoreConnection {
  readonly ctx: SqliteContext;
  /** What an acknowledged write survives: FULL power loss, NORMAL a crash of the process. */
  readonly synchronous: 'FULL' | 'NORMAL';
  readonly sweeper: Sweeper | undefined;
  private readonly durable: DurableSync;
  private readonly checkpointer: Checkpointer | undefined;

  constructor(location: string, options: SqliteStoreOptions) {
    const db = openDatabase(location, options);
    this.synchronous = options.synchronous ?? 'FULL';
    // FULL keeps its promise with the WAL's fdatasync off the event loop: the connection itself
    // commits at NORMAL, which in WAL mode still syncs at every checkpoint (see wal-sync.ts).
    const walFile = !db.memory && !db.readonly && db.pragma('journal_mode', { simple: true }) === 'wal';
    this.durable = walFile && this.synchronous === 'FULL' ? walSync(db) : noSync;
    if (walFile) db.pragma('synchronous = NORMAL');
    // Checkpoints leave the loop too (checkpointer.ts).
    this.checkpointer = walFile
      ? walCheckpointer(db, sqliteDriver().resolved, databaseFile(db), (until) =>
          this.ctx.queue.pauseUntil(until),
        )
      : undefined;
    const checkpointer = this.checkpointer;
    this.ctx = new SqliteContext(
      db,
      options.clock ?? systemClock,
      options.defaultTtlMs ?? DEFAULT_TTL_MS,
      this.durable,
      checkpointer ? () => checkpointer.committed() : undefined,
    );
    // Sweeps leave the loop too, where a second connection can open the file (sweeper.ts).
    const queue = this.ctx.queue;
    this.sweeper = walFile
      ? threadSweeper(
          sqliteDriver().resolved,
          databaseFile(db),
          (work) => queue.holdWrites(work),
          () => this.ctx.clock.monotonic(),
          db.pragma('busy_timeout', { simple: true }) as number,
          // Its commits are WAL frames like the store's: without a checkpoint for them the WAL grows.
          (out) => checkpointer?.committed(sweepCommitWeight(out)),
        )
      : undefined;
  }

  /**
   * Group-commit figures: commits, WAL syncs, the largest batch so far, checkpoints, and how long
   * write transactions held the event loop (the last, the longest, how many past the write slice).
   */
  get commitStats() {
    const q = this.ctx.queue;
    const c = this.checkpointer?.stats;
    return {
      commits: q.commits,
      syncs: q.syncs,
      maxBatch: q.maxBatch,
      checkpoints: { requested: c?.requested ?? 0, offLoop: c?.offLoop ?? 0, held: c?.held ?? 0 },
      holds: { ...q.holds },
      sweeps: { ...(this.sweeper?.stats ?? { sweeps: 0, heldLastMs: 0, heldMaxMs: 0 }) },
    };
  }

  /** Closes the connection and its helpers, once what is queued is committed and durable. */
  close(): Promise<void> {
    const shut = () => {
      this.ctx.db.close();
      this.durable.close();
    };
    // With nothing in flight the file closes now, as callers that do not await close() expect.
    if (this.ctx.queue.idle && !this.checkpointer?.started && !this.sweeper?.started) {
      try {
        shut();
      } catch (err) {
        return Promise.reject(err);
      }
      return Promise.resolve();
    }
    // Commit what is queued and wait until it is durable: a caller awaiting a write must not be left
    // hanging, and the sync in flight must finish before its descriptor closes.
    // The checkpointer's connection closes first, so this one, the last, folds the WAL in.
    return (this.sweeper?.close() ?? Promise.resolve())
      .then(() => this.ctx.queue.drain())
      .then(() => this.checkpointer?.close())
      .finally(shut);
  }
}
