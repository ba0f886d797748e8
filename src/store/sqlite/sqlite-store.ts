/**
 * Baton's embedded store: one SQLite file in WAL mode, durable by default (every acknowledged commit
 * survives power loss), with group commit. better-sqlite3 is synchronous; every write goes through
 * the write queue so that the writes of one event-loop turn share one transaction, and the fdatasync
 * that makes them durable runs off the event loop (write-queue.ts, wal-sync.ts). The connection and
 * the threads beside it are opened and closed in store-connection.ts; this file is the Store's methods.
 */
import type Database from 'better-sqlite3';
import type { BatonEvent, NewEvent } from '../../core/index.ts';
import { BatonError } from '../../core/index.ts';
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
import * as claims from './claims.ts';
import * as deliveries from './deliveries.ts';
import { sqliteHealth, walBytes } from './health.ts';
import { SqliteGraphCheckpoints } from './langgraph-tables.ts';
import * as reads from './run-reads.ts';
import * as runs from './run-writes.ts';
import * as signals from './signals.ts';
import { EVENTS_PER_INSERT, type SqliteContext } from './sqlite-context.ts';
import { type SqliteStoreOptions, StoreConnection } from './store-connection.ts';
import { translateStoreErrors } from './store-errors.ts';
import { Sweeps } from './sweeps.ts';
import * as timers from './timers.ts';

export type { SqliteStoreOptions } from './store-connection.ts';

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  private readonly connection: StoreConnection;
  private readonly ctx: SqliteContext;
  private readonly sweeps: Sweeps;
  /** What an acknowledged write survives: FULL power loss, NORMAL a crash of the process. */
  readonly synchronous: 'FULL' | 'NORMAL';
  private closed = false;
  private graphs?: SqliteGraphCheckpoints;

  constructor(
    readonly location: string,
    options: SqliteStoreOptions = {},
  ) {
    this.connection = new StoreConnection(location, options);
    this.ctx = this.connection.ctx;
    this.synchronous = this.connection.synchronous;
    this.sweeps = new Sweeps(this.ctx, this.connection.sweeper);
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
    return this.connection.commitStats;
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
    return this.connection.close();
  }
}

translateStoreErrors(SqliteStore);

export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(path, options);
}
