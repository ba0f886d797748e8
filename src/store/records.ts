/** The rows the store keeps, as the runtime sees them (camelCase, times in epoch ms, JSON decoded). */
import type { RunStatus, SerializedError, WaitReason } from '../core/index.ts';

export interface RunRecord {
  id: string;
  /** The flow run this step belongs to; null for top-level runs. */
  parentId: string | null;
  /** The top-level run (itself for top-level runs); events of a flow and its steps share it. */
  rootId: string;
  /** The step's id inside its flow. */
  stepId: string | null;
  kind: 'task' | 'flow';
  name: string;
  input: unknown;
  status: RunStatus;
  waitReason: WaitReason | null;
  /** When a `waiting: timer` run becomes claimable again, or a queued run may first be claimed. */
  wakeAt: number | null;
  /** Attempts started so far (the running one included). */
  attempt: number;
  dependsOn: string[];
  priority: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  updatedAt: number;
  /** Time budget and the deadline computed from the first start; survive restarts. */
  budgetMs: number | null;
  deadlineAt: number | null;
  output: unknown;
  error: SerializedError | null;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** Fencing token: increases on every claim; writes of an attempt must carry the current one. */
  leaseToken: number;
  /** Where the task definitions live (a module path), so another process can resume the run. */
  source: string | null;
  /** Options fixed at start (timeouts, mode, retry overrides, schedule, …). */
  options: Record<string, unknown>;
  /** Runtime notes the engine keeps with the run (e.g. the timeout-tracking state). */
  meta: Record<string, unknown>;
  /** When the sweeper may delete the run and everything it owns. */
  expiresAt: number | null;
}

export interface NewRun {
  id: string;
  parentId?: string | null;
  rootId?: string;
  stepId?: string | null;
  kind: 'task' | 'flow';
  name: string;
  input: unknown;
  status: 'queued' | 'waiting' | 'running';
  waitReason?: RunRecord['waitReason'];
  wakeAt?: number | null;
  dependsOn?: string[];
  priority?: number;
  budgetMs?: number | null;
  source?: string | null;
  options?: Record<string, unknown>;
  meta?: Record<string, unknown>;
}

export interface StepRecord {
  runId: string;
  key: string;
  attempt: number;
  output: unknown;
  version: number;
  createdAt: number;
}

export interface StoredCheckpoint {
  runId: string;
  seq: number;
  attempt: number;
  /** The task's own state, as it passed it to ctx.checkpoint. */
  state: unknown;
  /** The protocol's checkpoint document (checkpoint_id, timestamp, items_analyzed, …). */
  record: Record<string, unknown>;
  version: number;
  createdAt: number;
  /** Set when the stored checkpoint cannot be read; the engine then starts fresh. */
  corrupt?: string;
}

export interface PartialRecord {
  runId: string;
  seq: number;
  attempt: number;
  findings: unknown[];
  createdAt: number;
}

export interface TimerRecord {
  id: string;
  runId: string | null;
  kind: string;
  dueAt: number;
  payload: Record<string, unknown>;
  createdAt: number;
}

export interface WorkerRecord {
  id: string;
  host: string;
  pid: number;
  /** Process start time as the OS reports it; tells a live pid from a reused one. */
  processStart: string | null;
  startedAt: number;
  heartbeatAt: number;
}

/** Proof that the writer holds the run's current lease. */
export interface Fence {
  runId: string;
  token: number;
  /**
   * The claim that gave the lease (ClaimRequest.claim), when its claimer named one. The token alone
   * can repeat on Postgres after a crash lost a claim whose commit was not waited for; the claim
   * cannot. Compared by the Postgres store (absent matches a claim that named none). SQLite needs
   * none: a claim it answers before its own WAL sync is lost only if the machine goes down, and every
   * process that could have written under that token with it.
   */
  claim?: string;
}

export interface DeliveryRecord {
  id: string;
  runId: string;
  /** What is delivered: the protocol's `tool_result`, or a `tool_choice` in-progress notice. */
  kind: 'tool_result' | 'tool_choice';
  /** "callback", "callback:<name>" or "webhook:<name>". */
  channel: string;
  /**
   * Who can send it: `callback:<name>` (a process whose onDelivery has that name) or
   * `webhook:<name> <url>` (a process that configures that webhook with that URL). A process takes
   * only the routes it serves; the rest stay pending for one that can.
   */
  route: string;
  /** Where it goes (e.g. the webhook's url and secret name); JSON. */
  target: Record<string, unknown>;
  payload: Record<string, unknown>;
  idempotencyKey: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAt: number;
  lastError: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

export type NewDelivery = Pick<
  DeliveryRecord,
  'id' | 'runId' | 'kind' | 'channel' | 'route' | 'target' | 'payload' | 'idempotencyKey'
>;

/** Durable side effects written in the same transaction as a run change. */
export interface Effects {
  timers?: TimerRecord[];
  /** Timer ids to delete. */
  cancelTimers?: string[];
  deliveries?: NewDelivery[];
}

/** A signal sent to a run; `readAt` is set by the ctx.waitFor that read it (each is read once). */
export interface SignalRecord {
  id: string;
  runId: string;
  name: string;
  payload: unknown;
  createdAt: number;
  readAt: number | null;
  /** The memo key of the wait that read it. */
  readKey: string | null;
}

export type NewSignal = Pick<SignalRecord, 'id' | 'runId' | 'name' | 'payload'>;
