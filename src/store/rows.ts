/** Row ↔ record mapping shared by both stores (same columns, JSON as text). JSON columns are decoded here, and only here. */
import {
  BatonError,
  type BatonEvent,
  type BatonEventType,
  type RunStatus,
  type SerializedError,
  type WaitReason,
} from '../core/index.ts';
import type {
  DeliveryRecord,
  PartialRecord,
  RunRecord,
  SignalRecord,
  StepRecord,
  StoredCheckpoint,
  TimerRecord,
  WorkerRecord,
} from './records.ts';

export interface RunRow {
  id: string;
  parent_id: string | null;
  root_id: string;
  step_id: string | null;
  kind: 'task' | 'flow';
  name: string;
  input: string;
  status: string;
  wait_reason: string | null;
  wake_at: number | null;
  attempt: number;
  depends_on: string;
  priority: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
  budget_ms: number | null;
  deadline_at: number | null;
  output: string | null;
  error: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_token: number;
  /** Postgres only: the claim that gave the lease (Fence.claim). */
  lease_claim?: string | null;
  source: string | null;
  options: string;
  meta: string;
  expires_at: number | null;
}

export function json(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}

/**
 * Every JSON column was written by JSON.stringify, so text that does not parse was changed on disk
 * (a flipped byte inside a row, which SQLite's own checks cannot see): STORE_CORRUPT, never a raw
 * SyntaxError that callers would report as an internal error.
 */
export function parseJson(text: string | null, fallback: unknown = null): unknown {
  if (text === null) return fallback;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new BatonError('STORE_CORRUPT', `a stored JSON value does not parse: ${(cause as Error).message}`, {
      cause,
    });
  }
}

export function toRun(row: RunRow): RunRecord {
  return {
    id: row.id,
    parentId: row.parent_id,
    rootId: row.root_id,
    stepId: row.step_id,
    kind: row.kind,
    name: row.name,
    input: parseJson(row.input),
    status: row.status as RunStatus,
    waitReason: row.wait_reason as WaitReason | null,
    wakeAt: row.wake_at,
    attempt: row.attempt,
    dependsOn: parseJson(row.depends_on, []) as string[],
    priority: row.priority,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    updatedAt: row.updated_at,
    budgetMs: row.budget_ms,
    deadlineAt: row.deadline_at,
    output: parseJson(row.output, undefined),
    error: parseJson(row.error) as SerializedError | null,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    leaseToken: row.lease_token,
    source: row.source,
    options: parseJson(row.options, {}) as Record<string, unknown>,
    meta: parseJson(row.meta, {}) as Record<string, unknown>,
    expiresAt: row.expires_at,
  };
}

export function toStep(row: {
  run_id: string;
  key: string;
  attempt: number;
  output: string | null;
  version: number;
  created_at: number;
}): StepRecord {
  return {
    runId: row.run_id,
    key: row.key,
    attempt: row.attempt,
    output: parseJson(row.output, undefined),
    version: row.version,
    createdAt: row.created_at,
  };
}

/** A checkpoint whose JSON cannot be read is returned with `corrupt` set, never thrown. */
export function toCheckpoint(row: {
  run_id: string;
  seq: number;
  attempt: number;
  state: string;
  record: string;
  version: number;
  created_at: number;
}): StoredCheckpoint {
  let state: unknown;
  let record: Record<string, unknown> = {};
  let corrupt: string | undefined;
  try {
    state = JSON.parse(row.state);
    record = JSON.parse(row.record) as Record<string, unknown>;
  } catch (err) {
    corrupt = `checkpoint ${row.seq} is not valid JSON: ${(err as Error).message}`;
  }
  return {
    runId: row.run_id,
    seq: row.seq,
    attempt: row.attempt,
    state,
    record,
    version: row.version,
    createdAt: row.created_at,
    ...(corrupt ? { corrupt } : {}),
  };
}

export function toPartial(row: {
  run_id: string;
  seq: number;
  attempt: number;
  findings: string;
  created_at: number;
}): PartialRecord {
  return {
    runId: row.run_id,
    seq: row.seq,
    attempt: row.attempt,
    findings: parseJson(row.findings, []) as unknown[],
    createdAt: row.created_at,
  };
}

export function toEvent(row: {
  id: number;
  run_id: string;
  root_id: string;
  type: string;
  at: number;
  data: string;
}): BatonEvent {
  return {
    id: row.id,
    runId: row.run_id,
    rootId: row.root_id,
    type: row.type as BatonEventType,
    at: row.at,
    data: parseJson(row.data, {}) as BatonEvent['data'],
  };
}

export function toTimer(row: {
  id: string;
  run_id: string | null;
  kind: string;
  due_at: number;
  payload: string;
  created_at: number;
}): TimerRecord {
  return {
    id: row.id,
    runId: row.run_id,
    kind: row.kind,
    dueAt: row.due_at,
    payload: parseJson(row.payload, {}) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

export function toWorker(row: {
  id: string;
  host: string;
  pid: number;
  process_start: string | null;
  started_at: number;
  heartbeat_at: number;
}): WorkerRecord {
  return {
    id: row.id,
    host: row.host,
    pid: row.pid,
    processStart: row.process_start,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
  };
}

export interface SignalRow {
  id: string;
  run_id: string;
  name: string;
  payload: string;
  created_at: number;
  read_at: number | null;
  read_key: string | null;
}

export function toSignal(row: SignalRow): SignalRecord {
  return {
    id: row.id,
    runId: row.run_id,
    name: row.name,
    payload: parseJson(row.payload, null),
    createdAt: Number(row.created_at),
    readAt: row.read_at === null ? null : Number(row.read_at),
    readKey: row.read_key,
  };
}

/** A deliveries row as both stores read it. */
export interface DeliveryRow {
  id: string;
  run_id: string;
  kind: DeliveryRecord['kind'];
  channel: string;
  route: string;
  target: string;
  payload: string;
  idempotency_key: string;
  status: DeliveryRecord['status'];
  attempts: number;
  next_at: number;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export function toDelivery(r: DeliveryRow): DeliveryRecord {
  return {
    id: r.id,
    runId: r.run_id,
    kind: r.kind,
    channel: r.channel,
    route: r.route,
    target: parseJson(r.target, {}) as Record<string, unknown>,
    payload: parseJson(r.payload, {}) as Record<string, unknown>,
    idempotencyKey: r.idempotency_key,
    status: r.status,
    attempts: r.attempts,
    nextAt: r.next_at,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
  };
}
