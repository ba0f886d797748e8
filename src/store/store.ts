/**
 * The narrow storage port of Baton. Every method is one atomic transaction; methods that take a
 * `Fence` fail with LEASE_LOST unless the run is still `running` under that lease token, which is
 * how a stale owner (a frozen or timed-out attempt) is kept from writing after someone else took
 * the run over. The SQLite and Postgres implementations pass the same contract suite. Times come from the store's injected clock.
 */
import type { BatonEvent, NewEvent, RunStatus, SerializedError, WaitReason } from '../core/index.ts';
import type {
  DeliveryRecord,
  Effects,
  Fence,
  NewRun,
  NewSignal,
  PartialRecord,
  RunRecord,
  SignalRecord,
  StepRecord,
  StoredCheckpoint,
  TimerRecord,
  WorkerRecord,
} from './records.ts';

export interface RunPatch {
  status?: RunStatus;
  waitReason?: WaitReason | null;
  wakeAt?: number | null;
  output?: unknown;
  error?: SerializedError | null;
  finishedAt?: number | null;
  /** Set on the terminal transition: when the sweeper may delete the run. */
  expiresAt?: number | null;
  /** Shallow-merged into the run's meta. */
  meta?: Record<string, unknown>;
  input?: unknown;
  /** Drop the lease (owner, expiry) as part of the transition. */
  releaseLease?: boolean;
  /** Reset the attempt counter (a resume after exhausted retries starts a fresh retry budget). */
  resetAttempts?: boolean;
}

export interface TransitionGuard {
  /** The writer's lease; the transition fails with LEASE_LOST if it is not current. */
  fence?: Fence;
  /** The transition fails with RUN_CONFLICT unless the run is in one of these statuses. */
  expectStatus?: readonly RunStatus[];
}

export interface ClaimRequest {
  owner: string;
  leaseMs: number;
  limit: number;
  /** Only runs of these task names (the tasks this worker can execute). */
  names: readonly string[];
  /** Per-task limits across all workers: at most this many running at once. */
  nameLimits?: Readonly<Record<string, number>>;
  /**
   * Only these runs. A worker claims a run it has just seen started or resumed in its own process
   * this way, in the same commit that made it claimable.
   */
  ids?: readonly string[];
  /**
   * A name for this claim that no other claim has (random): the fences of its attempts carry it.
   * With it, the Postgres store answers a claim before its commit is durable (its WAL flush, 0.1-10
   * ms of an enqueue -> start), since a claim lost in a crash can then not be repeated with the
   * same fence; the attempt's first fenced write, durable, finds the lease gone.
   */
  claim?: string;
}

export interface RunQuery {
  status?: RunStatus;
  parentId?: string;
  /** Only top-level runs (no parent). @default true when parentId is not given */
  topLevel?: boolean;
  name?: string;
  /** Only `waiting` runs with this reason (implies status waiting). */
  waitReason?: WaitReason;
  /** Created at or after this instant (epoch ms). */
  createdAfter?: number;
  /** Created before this instant (epoch ms). */
  createdBefore?: number;
  /** Only runs with a delivery schedule (`options.schedule`), i.e. scheduled tool calls. */
  scheduled?: boolean;
  limit?: number;
  /** Ids sort by creation time; page with the last id seen. */
  beforeId?: string;
}

export interface EventQuery {
  runId?: string;
  /** All events of a flow and its steps. */
  rootId?: string;
  afterId?: number;
  limit?: number;
}

export interface RecoveredRun {
  runId: string;
  previousOwner: string;
}

export interface SweepResult {
  runs: number;
}

export interface SweepOptions {
  /**
   * Work one sweep may do before it commits and returns (callers sweep again until 0 runs come
   * back). A worker keeps the default so deadlines stay on time; `baton gc` passes more. SQLite
   * only. @default 1 ms (a quarter of the 4 ms write slice: background work yields more often)
   */
  sliceMs?: number;
}

export type EventListener = (events: readonly BatonEvent[]) => void;

export interface DeliveryTake {
  limit: number;
  /** The routes the caller can send (`DeliveryRecord.route`); other deliveries stay pending. */
  routes: readonly string[];
  /** How long a taken delivery stays hidden, by its route and the attempt it now is (from 1). */
  hideMs(route: string, attempt: number): number;
}

/** How long a taken timer stays hidden before it comes due again (its taker died, or failed). */
export const TIMER_HOLD_MS = 30_000;

/** Hints from other processes: 'work' (something may be claimable or due), 'events' (new events). */
export type WakeChannel = 'work' | 'events';

/** Something about the database an operator should act on (`GET /health`). */
export interface StoreWarning {
  /** Stable, for alerts: autovacuum_off, long_transaction, clock_skew, listen_unavailable, dead_rows. */
  code: string;
  message: string;
}

export interface StoreHealth {
  warnings: StoreWarning[];
  /** Figures for `/metrics` (Prometheus gauges). */
  gauges: Array<{ name: string; help: string; value: number; labels?: Readonly<Record<string, string>> }>;
}

export interface GetRunOptions {
  /**
   * `false`: answer without waiting until every commit made so far is durable (SQLite syncs the WAL
   * after COMMIT; Postgres commits are durable when they return, so there it changes nothing). Only
   * for a caller that writes next and answers nothing before that write's own sync, which covers
   * every earlier commit: resuming a waiting run. @default true
   */
  durable?: boolean;
}

/** The storage port Baton runs on (SQLite file or Postgres): runs, events, checkpoints, timers. */
export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  /** A description for messages, e.g. the database file path. */
  readonly location: string;

  // runs
  createRuns(runs: readonly NewRun[], events: readonly NewEvent[], effects?: Effects): Promise<void>;
  getRun(id: string, options?: GetRunOptions): Promise<RunRecord | undefined>;
  listRuns(query?: RunQuery): Promise<RunRecord[]>;
  /** Applies a patch atomically with its events; flows advance in the same transaction. */
  transition(
    runId: string,
    patch: RunPatch,
    events: readonly NewEvent[],
    guard?: TransitionGuard,
    /** Timers and deliveries written in the same transaction. */
    effects?: Effects,
  ): Promise<RunRecord>;
  /** Several transitions in one transaction (e.g. reopening a flow with its failed steps). */
  transitionAll(
    changes: ReadonlyArray<{
      runId: string;
      patch: RunPatch;
      events: readonly NewEvent[];
      guard?: TransitionGuard;
    }>,
  ): Promise<RunRecord[]>;
  countRuns(): Promise<Record<string, number>>;

  // claiming and leases
  claimRuns(request: ClaimRequest): Promise<RunRecord[]>;
  /**
   * Extends the owner's leases on the runs it is executing (`active`); returns every run it still
   * holds. A held run it is not executing (an attempt that crashed) is left to expire and recover.
   */
  heartbeat(owner: string, leaseMs: number, active: readonly string[]): Promise<string[]>;
  /** Requeues runs whose lease has expired. */
  recoverExpiredLeases(): Promise<RecoveredRun[]>;
  /** Requeues every run held by these owners (gone processes, or a graceful shutdown). */
  releaseOwners(owners: readonly string[], reason: 'owner_gone' | 'released'): Promise<RecoveredRun[]>;
  registerWorker(worker: WorkerRecord): Promise<void>;
  listWorkers(host?: string): Promise<WorkerRecord[]>;
  removeWorkers(ids: readonly string[]): Promise<void>;

  // what an attempt writes (fenced)
  recordStep(
    fence: Fence,
    step: Omit<StepRecord, 'runId' | 'createdAt'>,
    events: readonly NewEvent[],
  ): Promise<void>;
  getSteps(runId: string): Promise<StepRecord[]>;
  saveCheckpoint(
    fence: Fence,
    checkpoint: Omit<StoredCheckpoint, 'runId' | 'seq' | 'createdAt'>,
    events: readonly NewEvent[],
  ): Promise<number>;
  getLastCheckpoint(runId: string): Promise<StoredCheckpoint | undefined>;
  listCheckpoints(runId: string): Promise<StoredCheckpoint[]>;
  addPartial(
    fence: Fence,
    attempt: number,
    findings: readonly unknown[],
    events: readonly NewEvent[],
  ): Promise<number>;
  listPartials(runId: string): Promise<PartialRecord[]>;

  // events
  appendEvents(events: readonly NewEvent[], fence?: Fence): Promise<BatonEvent[]>;
  readEvents(query: EventQuery): Promise<BatonEvent[]>;
  /** The newest event id in the store (0 when there is none): where a live-only stream starts. */
  lastEventId(): Promise<number>;
  /** Called after each commit with the events it appended (in this process). */
  onEvents(listener: EventListener): () => void;
  /**
   * Hints that another process changed something (Postgres LISTEN/NOTIFY). Only hints: a process
   * still polls, slowly while `hinting` is true. Stores without cross-process hints leave it out.
   */
  onWake?(listener: (channel: WakeChannel) => void): () => void;
  /** True while hints arrive: polling may be slow. */
  readonly hinting?: boolean;
  /**
   * A number that changes when another connection commits to this database, and only then (not on
   * this store's own commits, which its `onEvents` listeners hear). A poll for other processes'
   * writes whose number has not changed can skip its reads. Stores that cannot tell leave it out.
   */
  dataVersion?(): number;
  /**
   * Most runs a worker asks one claim for (it launches them a bite at a time). A store whose claim
   * costs a round trip and a commit more than it costs per run (Postgres) takes many at once;
   * left out, 64: SQLite's claim runs on the event loop, and a big one holds it.
   */
  readonly claimBatch?: number;
  /**
   * What an operator should act on (a database setting, a pinned vacuum horizon, clock skew) and
   * figures for `/metrics`. Stores with nothing to report leave it out.
   */
  health?(): Promise<StoreHealth>;

  // durable timers
  addTimer(timer: TimerRecord): Promise<void>;
  /**
   * Takes timers that are due: each is hidden from other takers for TIMER_HOLD_MS and returned to
   * exactly one caller, who deletes it (`cancelTimers`) once handled. A taker that dies first
   * leaves it to come due again, so a timer is never lost; handlers are guarded transitions, so
   * its effect happens once.
   */
  takeDueTimers(limit: number): Promise<TimerRecord[]>;
  cancelTimers(ids: readonly string[]): Promise<void>;
  /**
   * The earliest moment something becomes due: a timer, a waiting run's wake time, a lease expiry,
   * or a pending delivery on one of `deliveryRoutes` (the routes the caller can send; others are
   * not its business and must not wake it).
   */
  nextWakeAt(deliveryRoutes?: readonly string[]): Promise<number | undefined>;

  // signals (ctx.waitFor)
  /** Stores a signal for a run that has not ended (RUN_CONFLICT otherwise), with its events and effects. */
  addSignal(signal: NewSignal, events: readonly NewEvent[], effects?: Effects): Promise<SignalRecord>;
  /**
   * Reads the oldest unread signal of this name (fenced): marks it read and records the read as the
   * step `step.key` (output `{ signal: { id, payload, sentAt } }`) in one transaction. Undefined when none.
   */
  readSignal(
    fence: Fence,
    name: string,
    step: { key: string; attempt: number; version: number },
    events: readonly NewEvent[],
  ): Promise<SignalRecord | undefined>;
  listSignals(runId: string, filter?: { name?: string; unread?: boolean }): Promise<SignalRecord[]>;

  // deliveries (callbacks and webhooks; the event stream is written with the run change itself)
  /**
   * Takes due pending deliveries on the routes the caller serves (each counts one attempt), hiding
   * each until `hideMs(route, attempt)` from now: a sender that dies mid-send leaves it to be taken
   * again then.
   */
  takeDueDeliveries(take: DeliveryTake): Promise<DeliveryRecord[]>;
  /**
   * Records a send: delivered, failed for good, or to be retried at `retryAt` — with its events
   * (`delivery:sent`, `delivery:failed`) in the same transaction.
   */
  settleDelivery(
    id: string,
    outcome:
      | { status: 'delivered' }
      | { status: 'failed'; error: string }
      | { status: 'retry'; error: string; retryAt: number },
    events?: readonly NewEvent[],
  ): Promise<void>;
  listDeliveries(runId: string): Promise<DeliveryRecord[]>;

  // housekeeping
  /** Deletes runs whose TTL has passed, with everything they own. */
  /** Deletes expired run trees, a bounded amount per call: call until it returns 0 runs. */
  sweep(options?: SweepOptions): Promise<SweepResult>;
  close(): Promise<void>;
}
