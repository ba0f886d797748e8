/**
 * Baton's embedded store: one SQLite file in WAL mode, durable by default (every acknowledged commit
 * survives power loss), with group commit. better-sqlite3 is synchronous; every write goes through
 * the write queue so that the writes of one event-loop turn share one transaction, and the fdatasync
 * that makes them durable runs off the event loop (write-queue.ts, wal-sync.ts).
 */
import type Database from 'better-sqlite3';
import type { BatonEvent, NewEvent } from '../../core/index.ts';
import { BatonError } from '../../core/index.ts';
import { type Clock, systemClock } from '../../time/index.ts';
import type { GraphCheckpointStore } from '../langgraph-records.ts';
import type {
  Effects,
  Fence,
  NewRun,
  NewSignal,
  PartialRecord,
  RunRecord,
  StepRecord,
  StoredCheckpoint,
  TimerRecord,
  WorkerRecord,
} from '../records.ts';
import type {
  ClaimRequest,
  DeliveryTake,
  EventListener,
  EventQuery,
  GetRunOptions,
  RecoveredRun,
  RunPatch,
  RunQuery,
  Store,
  StoreHealth,
  SweepOptions,
  SweepResult,
  TransitionGuard,
} from '../store.ts';
import * as attempts from './attempt-writes.ts';
import { type Checkpointer, walCheckpointer } from './checkpointer.ts';
import * as claims from './claims.ts';
import * as deliveries from './deliveries.ts';
import { sqliteDriver } from './driver.ts';
import { sqliteHealth, walBytes } from './health.ts';
import { SqliteGraphCheckpoints } from './langgraph-tables.ts';
import { type OpenOptions, openDatabase } from './open-database.ts';
import * as reads from './run-reads.ts';
import * as runs from './run-writes.ts';
import * as signals from './signals.ts';
import { DEFAULT_TTL_MS, EVENTS_PER_INSERT, SqliteContext } from './sqlite-context.ts';
import { translateStoreErrors } from './store-errors.ts';
import { sweepCommitWeight } from './sweep-plan.ts';
import { type Sweeper, threadSweeper } from './sweeper.ts';
import { Sweeps } from './sweeps.ts';
import * as timers from './timers.ts';
import { type DurableSync, databaseFile, noSync, walSync } from './wal-sync.ts';

export interface SqliteStoreOptions extends OpenOptions {
  /** @default systemClock */
  clock?: Clock;
  /** How long finished runs are kept when they carry no TTL of their own. @default 24 h */
  defaultTtlMs?: number;
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  private readonly ctx: SqliteContext;
  private readonly durable: DurableSync;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly sweeper: Sweeper | undefined;
  private readonly sweeps: Sweeps;
  /** What an acknowledged write survives: FULL power loss, NORMAL a crash of the process. */
  readonly synchronous: 'FULL' | 'NORMAL';
  private closed = false;
  private graphs?: SqliteGraphCheckpoints;

  constructor(
    readonly location: string,
    options: SqliteStoreOptions = {},
  ) {
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
    this.sweeps = new Sweeps(this.ctx, this.sweeper);
  }

  /** The underlying connection, for db_query references and tools that read Baton's tables. */
  get database(): Database.Database {
    return this.ctx.db;
  }

  /** LangGraph.js checkpoints kept in this database (`baton/langgraph`), sharing its group commit. */
  get langgraph(): GraphCheckpointStore {
    this.graphs ??= new SqliteGraphCheckpoints(this.ctx, () => this.guard());
    return this.graphs;
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

  /**
   * For `/health` and `/metrics`: how long writes held the event loop (what a time-aware process
   * most needs to know of its embedded database), commits, checkpoints and the WAL's size — with a
   * warning when the WAL outgrows what checkpoints keep it to (a reader that never ends pins it).
   */
  async health(): Promise<StoreHealth> {
    this.guard();
    return sqliteHealth(this.commitStats, walBytes(this.ctx.db));
  }

  private guard(): void {
    if (this.closed) throw new BatonError('STORE_CLOSED', `the store at ${this.location} is closed`);
  }

  createRuns(list: readonly NewRun[], events: readonly NewEvent[], effects?: Effects) {
    this.guard();
    return runs.createRuns(this.ctx, list, events, effects);
  }

  /** SQLite's own counter (PRAGMA data_version) on the connection every write of this store uses. */
  dataVersion(): number {
    this.guard();
    return this.ctx.db.pragma('data_version', { simple: true }) as number;
  }

  async getRun(id: string, options?: GetRunOptions): Promise<RunRecord | undefined> {
    this.guard();
    const run = runs.getRunSync(this.ctx, id);
    // What this read saw is answered only once durable (a result, an HTTP status): see write-queue.ts.
    if (options?.durable !== false) await this.ctx.queue.synced();
    return run;
  }

  async listRuns(q: RunQuery = {}): Promise<RunRecord[]> {
    this.guard();
    return reads.listRuns(this.ctx, q);
  }

  transition(
    runId: string,
    patch: RunPatch,
    events: readonly NewEvent[],
    guard?: TransitionGuard,
    effects?: Effects,
  ) {
    this.guard();
    return runs.transition(this.ctx, runId, patch, events, guard, effects);
  }

  transitionAll(
    changes: ReadonlyArray<{
      runId: string;
      patch: RunPatch;
      events: readonly NewEvent[];
      guard?: TransitionGuard;
    }>,
  ) {
    this.guard();
    return runs.transitionAll(this.ctx, changes);
  }

  async countRuns(): Promise<Record<string, number>> {
    this.guard();
    return reads.countRuns(this.ctx);
  }

  claimRuns(request: ClaimRequest) {
    this.guard();
    return claims.claimRuns(this.ctx, request);
  }

  heartbeat(owner: string, leaseMs: number, active: readonly string[]) {
    this.guard();
    return claims.heartbeat(this.ctx, owner, leaseMs, active);
  }

  recoverExpiredLeases(): Promise<RecoveredRun[]> {
    this.guard();
    return claims.recoverExpiredLeases(this.ctx);
  }

  releaseOwners(owners: readonly string[], reason: 'owner_gone' | 'released') {
    this.guard();
    return claims.releaseOwners(this.ctx, owners, reason);
  }

  registerWorker(worker: WorkerRecord) {
    this.guard();
    return claims.registerWorker(this.ctx, worker);
  }

  listWorkers(host?: string) {
    this.guard();
    return claims.listWorkers(this.ctx, host);
  }

  removeWorkers(ids: readonly string[]) {
    this.guard();
    return claims.removeWorkers(this.ctx, ids);
  }

  recordStep(fence: Fence, step: Omit<StepRecord, 'runId' | 'createdAt'>, events: readonly NewEvent[]) {
    this.guard();
    return attempts.recordStep(this.ctx, fence, step, events);
  }

  getSteps(runId: string) {
    this.guard();
    return attempts.getSteps(this.ctx, runId);
  }

  saveCheckpoint(
    fence: Fence,
    cp: Omit<StoredCheckpoint, 'runId' | 'seq' | 'createdAt'>,
    events: readonly NewEvent[],
  ) {
    this.guard();
    return attempts.saveCheckpoint(this.ctx, fence, cp, events);
  }

  getLastCheckpoint(runId: string) {
    this.guard();
    return attempts.getLastCheckpoint(this.ctx, runId);
  }

  listCheckpoints(runId: string) {
    this.guard();
    return attempts.listCheckpoints(this.ctx, runId);
  }

  addPartial(fence: Fence, attempt: number, findings: readonly unknown[], events: readonly NewEvent[]) {
    this.guard();
    return attempts.addPartial(this.ctx, fence, attempt, findings, events);
  }

  listPartials(runId: string): Promise<PartialRecord[]> {
    this.guard();
    return attempts.listPartials(this.ctx, runId);
  }

  appendEvents(events: readonly NewEvent[], fence?: Fence): Promise<BatonEvent[]> {
    this.guard();
    // A read and one INSERT (up to EVENTS_PER_INSERT events): no savepoint needed.
    return this.ctx.write(
      (scope) => {
        if (fence) this.ctx.checkFence(fence);
        return this.ctx.appendEvents(scope, events);
      },
      { atomic: events.length <= EVENTS_PER_INSERT },
    );
  }

  readEvents(query: EventQuery) {
    this.guard();
    return timers.readEvents(this.ctx, query);
  }

  lastEventId() {
    this.guard();
    return Promise.resolve(reads.lastEventId(this.ctx));
  }

  onEvents(listener: EventListener) {
    return this.ctx.onEvents(listener);
  }

  addTimer(timer: TimerRecord) {
    this.guard();
    return timers.addTimer(this.ctx, timer);
  }

  takeDueTimers(limit: number) {
    this.guard();
    return timers.takeDueTimers(this.ctx, limit);
  }

  cancelTimers(ids: readonly string[]) {
    this.guard();
    return timers.cancelTimers(this.ctx, ids);
  }

  nextWakeAt(deliveryRoutes?: readonly string[]) {
    this.guard();
    return timers.nextWakeAt(this.ctx, deliveryRoutes);
  }

  takeDueDeliveries(take: DeliveryTake) {
    this.guard();
    return deliveries.takeDueDeliveries(this.ctx, take);
  }

  settleDelivery(id: string, outcome: Parameters<Store['settleDelivery']>[1], events?: readonly NewEvent[]) {
    this.guard();
    return deliveries.settleDelivery(this.ctx, id, outcome, events);
  }

  listDeliveries(runId: string) {
    this.guard();
    return deliveries.listDeliveries(this.ctx, runId);
  }

  addSignal(signal: NewSignal, events: readonly NewEvent[], effects?: Effects) {
    this.guard();
    return signals.addSignal(this.ctx, signal, events, effects);
  }

  readSignal(
    fence: Fence,
    name: string,
    step: Parameters<Store['readSignal']>[2],
    events: readonly NewEvent[],
  ) {
    this.guard();
    return signals.readSignal(this.ctx, fence, name, step, events);
  }

  listSignals(runId: string, filter?: { name?: string; unread?: boolean }) {
    this.guard();
    return signals.listSignals(this.ctx, runId, filter);
  }

  sweep(options?: SweepOptions): Promise<SweepResult> {
    this.guard();
    return this.sweeps.sweep(options);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
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

translateStoreErrors(SqliteStore);

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
