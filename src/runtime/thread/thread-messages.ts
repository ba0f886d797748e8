/**
 * The messages between an attempt's parent and its task thread. Everything here is structured-clone
 * data: errors travel as `SerializedError`, values as plain data. Calls carry an id so the thread can
 * have several in flight (a task may checkpoint and record partials without awaiting each).
 */
import type { SerializedError } from '../../core/index.ts';
import type { Moment } from '../attempt-context.ts';
import type { CheckpointInfo, CheckpointView, DependencyOutput } from '../task-context.ts';
import type { TimeKeeperInit } from '../time-keeper.ts';

/** What the thread starts from (sent as `workerData`). */
export interface ThreadInit {
  /** File URL of the module that exports the task. */
  module: string;
  taskName: string;
  input: unknown;
  runId: string;
  rootId: string;
  stepId: string | null;
  attempt: number;
  timeoutMs: number;
  lastCheckpoint: CheckpointView | undefined;
  dependencies: Record<string, DependencyOutput>;
  mode: string | undefined;
  fast: boolean;
  time: TimeKeeperInit;
  log: { level: string; bindings: Record<string, unknown> };
  /** Set when the attempt's signal had already fired before the thread started. */
  abortReason?: SerializedError;
}

/** The context calls that need the parent (they write to the store, fenced). */
export interface ThreadCalls {
  stepLookup: (key: string) => { hit: boolean; value?: unknown };
  stepRecord: (key: string, value: unknown, durationMs: number) => unknown;
  checkpoint: (state: unknown, info: CheckpointInfo) => number;
  /** A checkpoint ctx.tool takes at a protocol moment, of the state last saved. */
  checkpointAt: (moment: Moment, itemsAnalyzed: number) => number;
  partial: (findings: unknown[]) => void;
  /** ctx.fetch: the parent resolves the data reference under the task's permissions. */
  fetch: (reference: unknown) => unknown;
  /** ctx.sleep / ctx.sleepUntil: the parent records the wake time and suspends the attempt. */
  sleep: (request: { duration?: number | string; until?: number; key?: string }) => void;
}

export type CallName = keyof ThreadCalls;

/** Events the thread's own tool and time logic produces; the parent appends them. */
export const THREAD_EVENT_TYPES = [
  'tool:skipped',
  'tool:degraded',
  'time:mode_changed',
  'task:event',
] as const;
export type ThreadEventType = (typeof THREAD_EVENT_TYPES)[number];

export type ThreadToParent =
  | { type: 'call'; id: number; name: CallName; args: unknown[] }
  | { type: 'progress'; done: number; total?: number }
  | { type: 'event'; event: ThreadEventType; data: Record<string, unknown> }
  | { type: 'log'; line: string }
  | { type: 'done'; ok: true; value: unknown }
  | { type: 'done'; ok: false; error: SerializedError };

export type ParentToThread =
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: SerializedError }
  | { type: 'abort'; reason: SerializedError };

export function isMessage<T extends { type: string }>(value: unknown): value is T {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}
