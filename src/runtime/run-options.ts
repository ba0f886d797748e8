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

/**
 * Decodes a run's stored options; a key of the wrong type reads as absent. Built by assignment, not
 * spreads: every attempt decodes its run's options, and the spread form made a temporary object a key.
 */
export function runOptionsOf(run: Pick<RunRecord, 'options'>): RunOptions {
  const o = run.options;
  const out: Partial<RunOptions> = {};
  if (o.fast === true) out.fast = true;
  if (typeof o.mode === 'string') out.mode = o.mode;
  if (o.escalation === 'ask' || o.escalation === 'policy') out.escalation = o.escalation;
  if (typeof o.ttlMs === 'number') out.ttlMs = o.ttlMs;
  // Written by the engine from a checked schedule (tool-input.ts); the shape is its own.
  if (aiNamed(o.schedule)) out.schedule = o.schedule as unknown as RunSchedule;
  if (aiNamed(o.toolResult)) out.toolResult = o.toolResult as unknown as ToolResultTarget;
  if (o.transfer !== undefined) out.transfer = o.transfer;
  if (typeof o.outputStep === 'string') out.outputStep = o.outputStep;
  if (typeof o.invocationTimeoutMs === 'number') out.invocationTimeoutMs = o.invocationTimeoutMs;
  if (typeof o.traceparent === 'string') out.traceparent = o.traceparent;
  out.user = isObject(o.user) ? o.user : callerKeys(o);
  return out as RunOptions;
}

/** An old row's caller keys: the top-level keys that are not the engine's. */
function callerKeys(o: Record<string, unknown>): Record<string, unknown> {
  const user: Record<string, unknown> = {};
  for (const k in o) if (Object.hasOwn(o, k) && !ENGINE_KEYS.has(k)) user[k] = o[k];
  return user;
}

/** What the engine writes: the same keys, `user` left out when the caller gave none. */
export type StoredRunOptions = Partial<RunOptions>;
