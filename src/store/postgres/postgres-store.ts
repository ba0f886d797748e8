/**
 * Baton's scale-out store: one Postgres database shared by many worker processes on many machines.
 * Each store keeps its tables in one schema (default `baton`). Writes are grouped into transactions
 * in issue order (see write-queue.ts); claims use FOR UPDATE SKIP LOCKED; leases carry fencing
 * tokens; event ids grow in commit order. Times come only from the injected clock, never from the
 * database server's now().
 */
import pg from 'pg';
import type { BatonEvent, NewEvent } from '../../core/index.ts';
import { BatonError } from '../../core/index.ts';
import { type Clock, systemClock } from '../../time/index.ts';
import type { GraphCheckpointStore } from '../langgraph-records.ts';
import type {
  Effects,
  Fence,
  NewRun,
  NewSignal,
  RunRecord,
  StepRecord,
  StoredCheckpoint,
  TimerRecord,
  WorkerRecord,
} from '../records.ts';
import { DEFAULT_TTL_MS } from '../run-rules.ts';
import type {
  ClaimRequest,
  DeliveryTake,
  EventListener,
  EventQuery,
  RunPatch,
  RunQuery,
  Store,
  StoreHealth,
  SweepResult,
  TransitionGuard,
  WakeChannel,
} from '../store.ts';
import * as attempts from './attempt-writes.ts';
import * as claims from './claims.ts';
import * as deliveries from './deliveries.ts';
import { storeHealth } from './health.ts';
import { PgGraphCheckpoints } from './langgraph-tables.ts';
import { POSTGRES_CLAIM_BATCH, POSTGRES_STORE } from './lazy.ts';
import { migrate, openError } from './migrate.ts';
import { PgContext, storeUnavailable } from './pg-context.ts';
import * as reads from './run-reads.ts';
import * as runs from './run-writes.ts';
import * as signals from './signals.ts';
import { isConnectionLoss, tablesOf } from './sql.ts';
import * as timers from './timers-and-sweep.ts';
import { describePool, parsePostgresUrl, redactError } from './url.ts';
import { PgWakeups, type WakeupMode } from './wakeups.ts';

export interface PostgresStoreOptions {
  /** Where the database is, e.g. `postgres://baton@db:5432/baton`. Give this or `pool`. */
  connectionString?: string;
  /** A pool the application owns; the store uses it and leaves it open on close. */
  pool?: pg.Pool;
  /** The schema holding Baton's tables; created on first open. @default 'baton' */
  schema?: string;
  /** @default systemClock */
  clock?: Clock;
  /** How long finished runs are kept when they carry no TTL of their own. @default 24 h */
  defaultTtlMs?: number;
  /** Connections in the pool the store creates (one writes at a time; the rest serve reads). @default 10 */
  maxConnections?: number;
  /** Refuse (STORE_INVALID) a schema that holds no Baton store yet instead of creating it. @default false */
  mustExist?: boolean;
  /** How long the store's own pool waits for a connection before failing. @default 10000 */
  connectTimeoutMs?: number;
  /**
   * Cross-process wake-ups: 'listen' keeps one LISTEN connection outside the pool (opened when a
   * worker or a follower subscribes) and polls slowly behind it; 'poll' never listens (for
   * transaction-mode poolers such as PgBouncer, and serverless). Also `?wakeups=poll` in the URL.
   * @default 'listen'
   */
  wakeups?: WakeupMode;
}

export const DEFAULT_SCHEMA = 'baton';

export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  /**
   * A claim is one round trip and one commit whatever it takes, and its rows are locked and
   * updated on the server: 1,000 runs due at once are claimed in one (≈ 25–50 ms on the server at
   * load 2–4) where bites of 64 went in 16 turns, each waiting for the event loop between them.
   */
  readonly claimBatch = POSTGRES_CLAIM_BATCH;
  readonly [POSTGRES_STORE] = true;
  readonly location: string;
  readonly schema: string;
  private readonly ctx: PgContext;
  private readonly ownsPool: boolean;
  /** Settles when the schema is migrated; every operation waits for it. */
  private readonly ready: Promise<void>;
  private readonly inflight = new Set<Promise<unknown>>();
  private closed = false;
  private graphs?: PgGraphCheckpoints;
  /** The URL's password, kept only to scrub it from any message that might echo it. */
  private readonly secret: string | undefined;
  private closing: Promise<void> | undefined;
  private readonly wakeups: PgWakeups;

  constructor(options: PostgresStoreOptions) {
    if (!options.pool && !options.connectionString)
      throw new BatonError('INVALID_OPTION', 'a Postgres store needs a connectionString or a pool');
    const url = options.connectionString ? parsePostgresUrl(options.connectionString) : undefined;
    this.schema = options.schema ?? url?.schema ?? DEFAULT_SCHEMA;
    if (this.schema.length === 0 || this.schema.length > 63)
      throw new BatonError('INVALID_OPTION', `schema must be 1 to 63 characters, got "${this.schema}"`);
    this.ownsPool = !options.pool;
    const pool =
      options.pool ??
      new pg.Pool({
        connectionString: url?.connectionString,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        application_name: 'baton',
      });
    // An idle connection the server drops emits 'error' on the pool; unhandled, it would end the process.
    if (this.ownsPool) pool.on('error', () => {});
    this.location = url?.redacted ?? describePool(pool);
    this.secret = url?.password;
    const clock = options.clock ?? systemClock;
    this.ctx = new PgContext(
      pool,
      tablesOf(this.schema),
      clock,
      options.defaultTtlMs ?? DEFAULT_TTL_MS,
      this.location,
    );
    const connectTimeout = options.connectTimeoutMs ?? 10_000;
    const mode = options.wakeups ?? url?.wakeups ?? 'listen';
    // A transaction-mode pooler hands each transaction another session: no prepared statements.
    this.ctx.pollReads.prepare = mode !== 'poll';
    this.wakeups = new PgWakeups({
      mode,
      connection: url
        ? { connectionString: url.connectionString, connectionTimeoutMillis: connectTimeout }
        : (pool.options as pg.ClientConfig),
      pool,
      schema: this.schema,
      clock,
    });
    this.ctx.wakeups = this.wakeups;
    this.ready = migrate(pool, this.ctx.t, clock.now(), this.location, options.mustExist ?? false).catch(
      (err: unknown) => {
        throw redactError(
          err instanceof BatonError ? err : openError(this.location, this.schema, err),
          this.secret,
        );
      },
    );
    // Reported by open() and by every operation; this only keeps it from counting as unhandled.
    this.ready.catch(() => {});
  }

  /** The pool, for db_query references and tools that read Baton's tables (schema-qualified). */
  get pool(): pg.Pool {
    return this.ctx.pool;
  }

  /**
   * Runs one SELECT for a db_query reference (built by Baton's reference resolver: declared tables
   * and columns only, every value bound) in a read-only transaction, BIGINT read as numbers.
   */
  queryReadOnly(text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    return this.op(() => reads.queryReadOnly(this.ctx, text, values));
  }

  /** LangGraph.js checkpoints kept in this schema (`baton/langgraph`), sharing its write queue. */
  get langgraph(): GraphCheckpointStore {
    this.graphs ??= new PgGraphCheckpoints(this.ctx, (fn) => this.op(fn));
    return this.graphs;
  }

  /** Group-commit figures: how many commits and the largest batch so far. */
  get commitStats() {
    return { commits: this.ctx.queue.commits, maxBatch: this.ctx.queue.maxBatch };
  }

  /** Resolves once the schema is ready; rejects (STORE_INVALID) if it cannot be opened. */
  async open(): Promise<this> {
    await this.ready;
    return this;
  }

  /** Runs an operation once the schema is ready, refusing it after close and tracking it until done. */
  private op<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new BatonError('STORE_CLOSED', `the store at ${this.location} is closed`));
    const p = this.ready.then(fn).catch((err: unknown) => {
      // A read on a dropped connection, a pool that cannot connect: the database, not the call.
      throw isConnectionLoss(err) ? redactError(storeUnavailable(this.location, err), this.secret) : err;
    });
    this.inflight.add(p);
    const forget = () => this.inflight.delete(p);
    p.then(forget, forget);
    return p;
  }

  createRuns(list: readonly NewRun[], events: readonly NewEvent[], effects?: Effects) {
    return this.op(() => runs.createRuns(this.ctx, list, events, effects));
  }

  getRun(id: string) {
    return this.op(() => reads.getRun(this.ctx, id));
  }

  listRuns(q: RunQuery = {}): Promise<RunRecord[]> {
    return this.op(() => reads.listRuns(this.ctx, q));
  }

  transition(
    runId: string,
    patch: RunPatch,
    events: readonly NewEvent[],
    guard?: TransitionGuard,
    effects?: Effects,
  ) {
    return this.op(() => runs.transition(this.ctx, runId, patch, events, guard, effects));
  }

  transitionAll(
    changes: ReadonlyArray<{
      runId: string;
      patch: RunPatch;
      events: readonly NewEvent[];
      guard?: TransitionGuard;
    }>,
  ) {
    return this.op(() => runs.transitionAll(this.ctx, changes));
  }

  countRuns(): Promise<Record<string, number>> {
    return this.op(() => reads.countRuns(this.ctx));
  }

  claimRuns(request: ClaimRequest) {
    return this.op(() => claims.claimRuns(this.ctx, request));
  }

  heartbeat(owner: string, leaseMs: number, active: readonly string[]) {
    return this.op(() => claims.heartbeat(this.ctx, owner, leaseMs, active));
  }

  recoverExpiredLeases() {
    return this.op(() => claims.recoverExpiredLeases(this.ctx));
  }

  releaseOwners(owners: readonly string[], reason: 'owner_gone' | 'released') {
    return this.op(() => claims.releaseOwners(this.ctx, owners, reason));
  }

  registerWorker(worker: WorkerRecord) {
    return this.op(() => claims.registerWorker(this.ctx, worker));
  }

  listWorkers(host?: string) {
    return this.op(() => claims.listWorkers(this.ctx, host));
  }

  removeWorkers(ids: readonly string[]) {
    return this.op(() => claims.removeWorkers(this.ctx, ids));
  }

  recordStep(fence: Fence, step: Omit<StepRecord, 'runId' | 'createdAt'>, events: readonly NewEvent[]) {
    return this.op(() => attempts.recordStep(this.ctx, fence, step, events));
  }

  getSteps(runId: string) {
    return this.op(() => attempts.getSteps(this.ctx, runId));
  }

  saveCheckpoint(
    fence: Fence,
    cp: Omit<StoredCheckpoint, 'runId' | 'seq' | 'createdAt'>,
    events: readonly NewEvent[],
  ) {
    return this.op(() => attempts.saveCheckpoint(this.ctx, fence, cp, events));
  }

  getLastCheckpoint(runId: string) {
    return this.op(() => attempts.getLastCheckpoint(this.ctx, runId));
  }

  listCheckpoints(runId: string) {
    return this.op(() => attempts.listCheckpoints(this.ctx, runId));
  }

  addPartial(fence: Fence, attempt: number, findings: readonly unknown[], events: readonly NewEvent[]) {
    return this.op(() => attempts.addPartial(this.ctx, fence, attempt, findings, events));
  }

  listPartials(runId: string) {
    return this.op(() => attempts.listPartials(this.ctx, runId));
  }

  appendEvents(events: readonly NewEvent[], fence?: Fence): Promise<BatonEvent[]> {
    return this.op(() => runs.appendEvents(this.ctx, events, fence));
  }

  readEvents(query: EventQuery) {
    return this.op(() => timers.readEvents(this.ctx, query));
  }

  lastEventId(): Promise<number> {
    return this.op(() => reads.lastEventId(this.ctx));
  }

  onEvents(listener: EventListener) {
    return this.ctx.onEvents(listener);
  }

  onWake(listener: (channel: WakeChannel) => void): () => void {
    if (this.closed) return () => {};
    return this.wakeups.subscribe(listener);
  }

  get hinting(): boolean {
    return this.wakeups.live;
  }

  /** Warnings and figures about the database (autovacuum, xmin horizon, clock skew, LISTEN, table sizes). */
  health(): Promise<StoreHealth> {
    return this.op(() => storeHealth(this.ctx, this.wakeups));
  }

  /** Wake-up figures: notifications sent and received, LISTEN reconnects. */
  get wakeupStats() {
    return { ...this.wakeups.stats, listening: this.wakeups.live };
  }

  addTimer(timer: TimerRecord) {
    return this.op(() => timers.addTimer(this.ctx, timer));
  }

  takeDueTimers(limit: number) {
    return this.op(() => timers.takeDueTimers(this.ctx, limit));
  }

  cancelTimers(ids: readonly string[]) {
    return this.op(() => timers.cancelTimers(this.ctx, ids));
  }

  nextWakeAt(deliveryRoutes?: readonly string[]) {
    return this.op(() => timers.nextWakeAt(this.ctx, deliveryRoutes));
  }

  takeDueDeliveries(take: DeliveryTake) {
    return this.op(() => deliveries.takeDueDeliveries(this.ctx, take));
  }

  settleDelivery(id: string, outcome: Parameters<Store['settleDelivery']>[1], events?: readonly NewEvent[]) {
    return this.op(() => deliveries.settleDelivery(this.ctx, id, outcome, events));
  }

  listDeliveries(runId: string) {
    return this.op(() => deliveries.listDeliveries(this.ctx, runId));
  }

  addSignal(signal: NewSignal, events: readonly NewEvent[], effects?: Effects) {
    return this.op(() => signals.addSignal(this.ctx, signal, events, effects));
  }

  readSignal(
    fence: Fence,
    name: string,
    step: Parameters<Store['readSignal']>[2],
    events: readonly NewEvent[],
  ) {
    return this.op(() => signals.readSignal(this.ctx, fence, name, step, events));
  }

  listSignals(runId: string, filter?: { name?: string; unread?: boolean }) {
    return this.op(() => signals.listSignals(this.ctx, runId, filter));
  }

  sweep(): Promise<SweepResult> {
    return this.op(() => timers.sweep(this.ctx));
  }

  /** Refuses new work, waits for what is in flight (queued writes commit), then ends an owned pool. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await Promise.allSettled([this.ready, ...this.inflight]);
      await this.ctx.queue.idle();
      await this.wakeups.close();
      if (this.ownsPool) await this.ctx.pool.end();
    })();
    return this.closing;
  }
}

/** Opens (and migrates) a Postgres store; rejects with STORE_INVALID if the schema cannot be used. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = new PostgresStore(options);
  try {
    return await store.open();
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}
