/**
 * The typed event map. Every event is a `noun:verb` name with a JSON payload, appended to the run's
 * durable log in the same transaction as the change it describes. The log feeds the CLI view, the
 * SSE stream, structured logs and the tests (which wait for events instead of sleeping).
 */

import type { SerializedError } from './errors.ts';
import type { Answerer } from './retry/answerer.ts';
import type { RunStatus, WaitReason } from './run-state.ts';

/** One durable wait of a suspended attempt, as its event shows it. */
export interface SuspendedWait {
  kind: 'timer' | 'child' | 'signal';
  /** The memo key of the wait (`baton:sleep:1`, `baton:invoke:2`, …). */
  key: string;
  /** When a timer wakes the run, or a child/signal wait times out (ISO 8601). */
  until?: string;
  childId?: string;
  signal?: string;
}

export interface BatonEventMap {
  'run:created': { name: string; kind: 'task' | 'flow'; stepId?: string; parentId?: string };
  'run:queued': {
    reason:
      | 'created'
      | 'dependencies_met'
      | 'retry_due'
      | 'resumed'
      | 'lease_recovered'
      | 'released'
      /** A run suspended in ctx.invoke / ctx.waitFor: a child ended, a signal came, a timeout passed. */
      | 'woken';
  };
  'run:waiting': { reason: WaitReason; wakeAt?: string; detail?: string };
  'run:succeeded': { durationMs: number };
  'run:partial': { durationMs: number; incomplete?: string[] };
  'run:failed': { error: SerializedError };
  'run:cancelled': { reason: string };
  'run:expired': { reason: string };
  'run:resumed': { from: RunStatus; by: string };
  'attempt:started': { attempt: number; owner: string; timeoutMs: number | null; resumedFrom?: number };
  'attempt:succeeded': { attempt: number; durationMs: number };
  'attempt:failed': { attempt: number; durationMs: number; error: SerializedError };
  'attempt:timed_out': { attempt: number; timeoutMs: number; findings: number };
  'attempt:retrying': { attempt: number; nextAttempt: number; waitMs: number; nextTimeoutMs: number | null };
  /** The task body waits durably (ctx.sleep, ctx.invoke, ctx.waitFor): the attempt ends, the slot is free. */
  'attempt:suspended': { attempt: number; durationMs: number; waits: SuspendedWait[] };
  /** A signal was stored for the run (baton.signal); a ctx.waitFor reads it once. */
  'signal:received': { name: string; signalId: string };
  'step:completed': { key: string; durationMs: number };
  /** Memoized steps an attempt got from the record instead of running them again. */
  'step:replayed': { count: number; keys: string[] };
  'checkpoint:saved': {
    seq: number;
    itemsAnalyzed: number | null;
    progressPercentage: number | null;
    timeStatus?: string;
    remainingSeconds?: number;
    /** Why it was taken: by the task, before a tool call or deep analysis, after a long call. */
    moment?: string;
  };
  'checkpoint:loaded': { seq: number };
  'checkpoint:invalid': { seq: number; reason: string };
  'partial:recorded': { count: number; total: number };
  'progress:reported': { done: number; total: number | null };
  'time:mode_changed': { from: string; to: string; timeStatus: string; remainingSeconds: number };
  'tool:skipped': { kind: string; name: string; reason: string; alternative: string; level: string };
  'tool:degraded': { kind: string; name: string; reason: string; alternative: string; level: string };
  'decision:requested': { request: Record<string, unknown>; reason: string; timeoutAt?: string };
  /** `by` is the readable label of `answeredBy` (absent in events written before it existed: see answererOf). */
  'decision:made': { answer: Record<string, unknown>; by: string; answeredBy?: Answerer; action: string };
  /** The protocol's event flow: `args`, then `tool_choice` (in progress), then `tool_result`. */
  'tool:args': { type: 'args'; aiName: string; args: unknown; schedule?: Record<string, unknown> };
  'tool:choice': {
    type: 'tool_choice';
    aiName: string;
    status: 'in_progress';
    message: string;
    [k: string]: unknown;
  };
  'tool:result': { type: 'tool_result'; aiName: string; status: string; late: boolean; [k: string]: unknown };
  'delivery:held': { dueAt: string; actualMs: number };
  'delivery:sent': { channel: string; kind: string; attempts: number; idempotencyKey: string };
  'delivery:failed': { channel: string; kind: string; attempts: number; error: string; final: boolean };
  /** A task's own event (ctx.emit), e.g. the agent loop's history compression. */
  'task:event': { kind: string; data: Record<string, unknown> };
  'refs:resolved': { count: number; bytes: number; failures: Array<Record<string, unknown>> };
  /** The protocol's context_management report for the step's inputs. */
  'context:planned': { report: { context_management: Record<string, unknown> }; notes: string[] };
  'lease:recovered': { previousOwner: string; reason: 'expired' | 'owner_gone' | 'released' };
  'lease:lost': { owner: string; reason: string };
  'flow:step_blocked': { stepId: string; dependency: string; dependencyStatus: RunStatus };
  'log:message': {
    level: 'debug' | 'info' | 'warn' | 'error';
    message: string;
    fields?: Record<string, unknown>;
  };
}

/** The name of a run event ('run.started', 'checkpoint.saved', …). */
export type BatonEventType = keyof BatonEventMap;

/** An event as stored and streamed. `id` increases across the whole store (SSE Last-Event-ID). */
export interface BatonEvent<T extends BatonEventType = BatonEventType> {
  id: number;
  runId: string;
  rootId: string;
  type: T;
  at: number;
  data: BatonEventMap[T];
}

/** An event about to be appended (ids and times are assigned by the store). */
export interface NewEvent<T extends BatonEventType = BatonEventType> {
  runId: string;
  type: T;
  data: BatonEventMap[T];
}

export function newEvent<T extends BatonEventType>(
  runId: string,
  type: T,
  data: BatonEventMap[T],
): NewEvent<T> {
  return { runId, type, data };
}

/** Narrows an event to one type, so its `data` is typed: `if (isEventType(e, 'run.succeeded')) e.data.output`. */
export function isEventType<T extends BatonEventType>(event: BatonEvent, type: T): event is BatonEvent<T> {
  return event.type === type;
}
