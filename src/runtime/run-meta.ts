/**
 * What the engine keeps with a run while it works on it (`RunRecord.meta`), declared once and read
 * through one decoder: the failure count, the open question and the answers given, the overrides an
 * answer set for the next attempt, the attempts' timeouts, the durable waits, the delivery notice.
 * Only the engine writes these keys; a value of the wrong type (a damaged or foreign row) reads as
 * absent rather than being trusted through a cast.
 */
import { type Answerer, type AttemptLogEntry, answererOf, type SuspendedWait } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { EndedByAnswer, PendingDecision } from './decisions.ts';

/** One answer in a run's decision history. */
export interface AnsweredDecision {
  /** The answer as given: a choice id, and a mode, an input or a reason with some choices. */
  answer: { choice: string; [detail: string]: unknown };
  /** The readable label of `answeredBy`. */
  by: string;
  answeredBy: Answerer;
  /** ISO 8601. */
  at: string;
  reason?: string;
}

export interface RunMeta {
  /** Failed attempts since the run last started over. */
  failures: number;
  /** The question the run waits on. */
  decision?: PendingDecision;
  /** Every answer given, oldest first. */
  decisions: AnsweredDecision[];
  /** The person's answer that ended the run. */
  endedBy?: EndedByAnswer;
  /** A mode an answer ("different_mode") switched the run to. */
  modeOverride?: string;
  /** A timeout an answer ("retry_extended") set for the next attempt. */
  timeoutOverrideMs?: number;
  /** Each attempt's timeout and whether it hit it. */
  attemptsLog: AttemptLogEntry[];
  /** When a scheduled tool's in-progress notice went out (epoch ms). */
  progressSentAt?: number;
  /** The durable waits a suspended run recorded. */
  awaiting: SuspendedWait[];
  /** The run span's own trace context (baton/otel). */
  traceparent?: string;
}

type Row = Record<string, unknown>;

function isObject(v: unknown): v is Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pendingOf(v: unknown): PendingDecision | undefined {
  if (!isObject(v) || !isObject(v.request) || typeof v.attempt !== 'number') return undefined;
  // Written whole by escalate() / the approval path; the checks above tell it from a cleared or foreign value.
  return v as unknown as PendingDecision;
}

function answeredOf(v: unknown): AnsweredDecision | undefined {
  if (!isObject(v) || typeof v.at !== 'string') return undefined;
  if (!isObject(v.answer) || typeof v.answer.choice !== 'string') return undefined;
  const answeredBy = answererOf(v);
  return {
    answer: { ...v.answer, choice: v.answer.choice },
    by: typeof v.by === 'string' ? v.by : answeredBy.kind === 'person' ? answeredBy.name : 'policy',
    answeredBy,
    at: v.at,
    ...(typeof v.reason === 'string' ? { reason: v.reason } : {}),
  };
}

function endedByOf(v: unknown): EndedByAnswer | undefined {
  if (!isObject(v) || typeof v.choice !== 'string' || typeof v.by !== 'string' || typeof v.at !== 'string')
    return undefined;
  return { choice: v.choice, by: v.by, at: v.at };
}

function attemptOf(v: unknown): AttemptLogEntry | undefined {
  if (!isObject(v) || typeof v.attempt !== 'number') return undefined;
  return {
    attempt: v.attempt,
    timeoutMs: typeof v.timeoutMs === 'number' ? v.timeoutMs : null,
    timedOut: v.timedOut === true,
  };
}

function waitOf(v: unknown): SuspendedWait | undefined {
  if (!isObject(v) || typeof v.key !== 'string') return undefined;
  if (v.kind !== 'timer' && v.kind !== 'child' && v.kind !== 'signal') return undefined;
  return {
    kind: v.kind,
    key: v.key,
    ...(typeof v.until === 'string' ? { until: v.until } : {}),
    ...(typeof v.childId === 'string' ? { childId: v.childId } : {}),
    ...(typeof v.signal === 'string' ? { signal: v.signal } : {}),
  };
}

function listOf<T>(v: unknown, decode: (item: unknown) => T | undefined): T[] {
  if (!Array.isArray(v)) return [];
  return v.map(decode).filter((x): x is T => x !== undefined);
}

/** Decodes a run's meta. Built by assignment, not spreads: every attempt decodes its run's meta. */
export function runMetaOf(run: Pick<RunRecord, 'meta'>): RunMeta {
  const m = run.meta;
  const out: Partial<RunMeta> = { failures: typeof m.failures === 'number' ? m.failures : 0 };
  const decision = pendingOf(m.decision);
  if (decision) out.decision = decision;
  out.decisions = listOf(m.decisions, answeredOf);
  const endedBy = endedByOf(m.endedBy);
  if (endedBy) out.endedBy = endedBy;
  if (typeof m.modeOverride === 'string') out.modeOverride = m.modeOverride;
  if (typeof m.timeoutOverrideMs === 'number') out.timeoutOverrideMs = m.timeoutOverrideMs;
  out.attemptsLog = listOf(m.attemptsLog, attemptOf);
  if (typeof m.progressSentAt === 'number') out.progressSentAt = m.progressSentAt;
  out.awaiting = listOf(m.awaiting, waitOf);
  if (typeof m.traceparent === 'string') out.traceparent = m.traceparent;
  return out as RunMeta;
}
