/**
 * Runs as the API shows them: the stored record without server stack traces, and for agent jobs
 * the counters the protocol's metadata names (turns, tool calls, duration, wasResumed).
 */
import type { SerializedError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';

/** A run as the API returns it: the record, minus stack traces. */
export type RunView = Omit<RunRecord, 'error'> & { error: Omit<SerializedError, 'stack'> | null };

export function runView(run: RunRecord): RunView {
  return { ...run, error: run.error ? withoutStack(run.error) : null };
}

export function withoutStack(error: SerializedError): Omit<SerializedError, 'stack'> {
  const { stack: _stack, cause, ...rest } = error;
  return cause ? { ...rest, cause: withoutStack(cause) as SerializedError } : rest;
}

/** What an agent invocation reports: from its output when done, from the run's meta when parked. */
export interface InvocationFacts {
  turns?: number;
  toolCalls?: number;
  durationMs?: number;
  timeoutMs?: number;
  wasResumed?: boolean;
}

function numberAt(o: Record<string, unknown>, key: string): number | undefined {
  const v = o[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function factsOf(o: unknown): InvocationFacts {
  if (typeof o !== 'object' || o === null) return {};
  const r = o as Record<string, unknown>;
  const facts: InvocationFacts = {};
  const turns = numberAt(r, 'turns');
  const toolCalls = numberAt(r, 'toolCalls');
  const durationMs = numberAt(r, 'durationMs');
  const timeoutMs = numberAt(r, 'timeoutMs');
  if (turns !== undefined) facts.turns = turns;
  if (toolCalls !== undefined) facts.toolCalls = toolCalls;
  if (durationMs !== undefined) facts.durationMs = durationMs;
  if (timeoutMs !== undefined) facts.timeoutMs = timeoutMs;
  if (typeof r.wasResumed === 'boolean') facts.wasResumed = r.wasResumed;
  return facts;
}

/** The finished invocation's facts: the agent output (turns, toolCalls, …) when present. */
export function outputFacts(run: RunRecord): InvocationFacts {
  return factsOf(run.output);
}

/** The parked invocation's facts (`run.meta.invocation`, written when the run waits for resume). */
export function parkedFacts(run: RunRecord): InvocationFacts {
  return factsOf(run.meta.invocation);
}
