/**
 * What a run keeps of how it was started (`RunRecord.options`), declared once and read through one
 * decoder. The engine's keys sit at the top level; the caller's own options
 * (`start(task, input, { options })`) are kept under `user`, which the engine never reads — so a
 * caller's `{ mode }`, `{ schedule }` or `{ ttlMs }` cannot change what the engine does.
 *
 * Rows stored before `user` existed have the caller's keys mixed in at the top level; the decoder
 * reads the engine's keys by their types as before and gives the rest back as `user`.
 */
import type { RunRecord } from '../store/index.ts';
import type { RunSchedule, ToolResultTarget } from './scheduled-delivery.ts';

export interface RunOptions {
  /** Fast mode (start option `fast`). */
  fast?: boolean;
  /** Research mode for the timeouts (start option `mode`), overriding the task's. */
  mode?: string;
  /** Who answers an escalation (start option `escalation`). */
  escalation?: 'ask' | 'policy';
  /** How long the finished run is kept, from its task or flow. */
  ttlMs?: number;
  /** A tool's delivery schedule (protocol 004). */
  schedule?: RunSchedule;
  /** A tool run without a schedule: its outcome still goes out as a `tool_result`. */
  toolResult?: ToolResultTarget;
  /** A flow step's reference transfer settings (protocol 002). */
  transfer?: unknown;
  /** The flow step whose output is the flow's output. */
  outputStep?: string;
  /** A cap on every attempt's timeout (a serverless host's invocation limit less its margin). */
  invocationTimeoutMs?: number;
  /** The caller's W3C trace context; baton/otel makes it the run span's parent. */
  traceparent?: string;
  /** The caller's own options, kept with the run and never read by the engine. */
  user: Record<string, unknown>;
}

/** The engine's keys: everything else at the top level of an old row was the caller's. */
const ENGINE_KEYS: ReadonlySet<string> = new Set([
  'fast',
  'mode',
  'escalation',
  'ttlMs',
  'schedule',
  'toolResult',
  'transfer',
  'outputStep',
  'invocationTimeoutMs',
  'traceparent',
  'user',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function aiNamed(v: unknown): boolean {
  return isObject(v) && typeof v.aiName === 'string';
}

/** Decodes a run's stored options; a key of the wrong type reads as absent. */
export function runOptionsOf(run: Pick<RunRecord, 'options'>): RunOptions {
  const o = run.options;
  const user = isObject(o.user)
    ? o.user
    : Object.fromEntries(Object.entries(o).filter(([k]) => !ENGINE_KEYS.has(k)));
  return {
    ...(o.fast === true ? { fast: true } : {}),
    ...(typeof o.mode === 'string' ? { mode: o.mode } : {}),
    ...(o.escalation === 'ask' || o.escalation === 'policy' ? { escalation: o.escalation } : {}),
    ...(typeof o.ttlMs === 'number' ? { ttlMs: o.ttlMs } : {}),
    // Written by the engine from a checked schedule (tool-input.ts); the shape is its own.
    ...(aiNamed(o.schedule) ? { schedule: o.schedule as unknown as RunSchedule } : {}),
    ...(aiNamed(o.toolResult) ? { toolResult: o.toolResult as unknown as ToolResultTarget } : {}),
    ...(o.transfer !== undefined ? { transfer: o.transfer } : {}),
    ...(typeof o.outputStep === 'string' ? { outputStep: o.outputStep } : {}),
    ...(typeof o.invocationTimeoutMs === 'number' ? { invocationTimeoutMs: o.invocationTimeoutMs } : {}),
    ...(typeof o.traceparent === 'string' ? { traceparent: o.traceparent } : {}),
    user,
  };
}

/** What the engine writes: the same keys, `user` left out when the caller gave none. */
export type StoredRunOptions = Partial<RunOptions>;
