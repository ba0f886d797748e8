/**
 * Sync mode: wait until the run settles (ends, parks for a resume, or waits for a decision) or the
 * request's deadline passes, then answer as protocol 003 does — 200 with the result and metadata,
 * or 408 with the resumable-timeout body (`details.jobId`, `canResume`, `wasResumed`,
 * `durationMs`, `timeoutMs`) — and 422 for a failed run, 202 for a pending decision.
 */
import type { DecisionRequest, RunStatus } from '../core/index.ts';
import type { Baton, OpenDecision } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import { outputFacts, parkedFacts, withoutStack } from './run-views.ts';
import { type ErrorBody, jsonResponse } from './wire-errors.ts';

export interface SyncWait {
  jobId: string;
  /** When the request arrived, on clock.monotonic(). */
  arrivedAt: number;
  /** How long the request may wait in all, from its arrival. */
  waitMs: number;
  /** Fires when the client goes away. */
  signal: AbortSignal | undefined;
}

export interface Settled {
  run: RunRecord;
  /** The questions the run (for a flow: its steps) waits on. */
  decisions: OpenDecision[];
  /** The deadline passed before the run settled. */
  deadlinePassed: boolean;
  waitedMs: number;
}

/** Waits for `baton.settled` under the request's deadline (a timer on the injected clock). */
export async function waitUntilSettled(baton: Baton, clock: Clock, wait: SyncWait): Promise<Settled> {
  const controller = new AbortController();
  const left = Math.max(0, wait.waitMs - (clock.monotonic() - wait.arrivedAt));
  const timer = clock.setTimer(left, () => controller.abort(new Error('deadline')));
  const onGone = () => controller.abort(new Error('client gone'));
  wait.signal?.addEventListener('abort', onGone, { once: true });
  try {
    const run = await baton.settled(wait.jobId, { signal: controller.signal });
    const decisions =
      run.status === 'waiting' || run.kind === 'flow' ? await baton.openDecisions(run.id) : [];
    return { run, decisions, deadlinePassed: false, waitedMs: clock.monotonic() - wait.arrivedAt };
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    const run = await baton.getRun(wait.jobId);
    if (!run) throw err;
    return { run, decisions: [], deadlinePassed: true, waitedMs: clock.monotonic() - wait.arrivedAt };
  } finally {
    clock.clearTimer(timer);
    wait.signal?.removeEventListener('abort', onGone);
  }
}

export interface SuccessBody {
  success: true;
  result: unknown;
  /** An agent's answer as protocol 003 shows it: the text and the context it gathered. */
  insights?: { rawText: string; contextSummary: Record<string, unknown> };
  partial?: true;
  metadata: {
    mode: 'sync';
    jobId: string;
    turns?: number;
    toolCalls?: number;
    durationMs: number;
    wasResumed: boolean;
    usedFunctionCalling?: boolean;
    cached?: true;
  };
}

/** 202 for an async start or resume. */
export interface AcceptedBody {
  success: true;
  jobId: string;
  status: RunStatus;
}

/** The protocol's 408 body. */
export interface TimeoutBody extends ErrorBody {
  details: { jobId: string; canResume: boolean; wasResumed: boolean; durationMs: number; timeoutMs: number };
}

/** 202 when a sync run (or, for a flow, one of its steps) stopped to wait for a decision. */
export interface DecisionBody {
  success: true;
  jobId: string;
  /** `waiting` for a task; a flow whose step asks is still `running`. */
  status: RunStatus;
  waitReason: 'decision';
  decision: DecisionRequest;
  /** For a flow: the step run that asks (the answer may go to the flow's id when only one asks). */
  stepRunId?: string;
  stepId?: string | null;
  /** Every open question when several steps ask at once. */
  decisions?: OpenDecision[];
}

/** The 003 `insights` of an agent output (`defineAgentTask`): its text and context summary. */
function insightsOf(output: unknown): SuccessBody['insights'] {
  if (typeof output !== 'object' || output === null) return undefined;
  const o = output as { text?: unknown; contextSummary?: unknown };
  if (typeof o.text !== 'string') return undefined;
  const summary = o.contextSummary;
  return {
    rawText: o.text,
    contextSummary:
      typeof summary === 'object' && summary !== null && !Array.isArray(summary)
        ? (summary as Record<string, unknown>)
        : {},
  };
}

/** The protocol's `error` for a resumable timeout: `<task>_timeout` (e.g. "insights_timeout"). */
export function timeoutCode(taskName: string): string {
  return `${taskName}_timeout`;
}

/** 200 for a result (`cached`: a resume of a finished job returns its stored result). */
export function resultResponse(run: RunRecord, resumed: boolean, cached = false): Response {
  const facts = outputFacts(run);
  const took = run.finishedAt !== null && run.startedAt !== null ? run.finishedAt - run.startedAt : 0;
  const insights = insightsOf(run.output);
  const usedFunctionCalling = (run.output as { usedFunctionCalling?: unknown } | null)?.usedFunctionCalling;
  const body: SuccessBody = {
    success: true,
    result: run.output ?? null,
    ...(insights ? { insights } : {}),
    ...(run.status === 'partial' ? { partial: true as const } : {}),
    metadata: {
      mode: 'sync',
      jobId: run.id,
      ...(facts.turns !== undefined ? { turns: facts.turns } : {}),
      ...(facts.toolCalls !== undefined ? { toolCalls: facts.toolCalls } : {}),
      durationMs: Math.round(facts.durationMs ?? took),
      wasResumed: cached ? false : (facts.wasResumed ?? resumed),
      ...(typeof usedFunctionCalling === 'boolean' ? { usedFunctionCalling } : {}),
      ...(cached ? { cached: true as const } : {}),
    },
  };
  return jsonResponse(body, 200);
}

/** The protocol's 408: the job stopped at its limit (or the wait ended) and can be resumed. */
export function timeoutResponse(settled: Settled, wait: SyncWait, resumed: boolean): Response {
  const { run } = settled;
  const parked = run.status === 'waiting' && run.waitReason === 'resume';
  const facts = parked ? parkedFacts(run) : {};
  const timeoutMs = Math.round(facts.timeoutMs ?? wait.waitMs);
  const durationMs = Math.round(facts.durationMs ?? settled.waitedMs);
  const next = parked
    ? 'A checkpoint was saved - retry with resumeJobId to continue.'
    : 'The job is still running - retry with resumeJobId to continue.';
  const body: TimeoutBody = {
    success: false,
    error: timeoutCode(run.name),
    message: `${run.name} timed out after ${timeoutMs}ms. ${next}`,
    details: {
      jobId: run.id,
      canResume: true,
      wasResumed: facts.wasResumed ?? resumed,
      durationMs,
      timeoutMs,
    },
  };
  return jsonResponse(body, 408);
}

/** Answers a sync request from how its run settled. */
export function settledResponse(settled: Settled, wait: SyncWait, resumed: boolean): Response {
  const { run } = settled;
  switch (run.status) {
    case 'succeeded':
    case 'partial':
      return resultResponse(run, resumed);
    case 'failed':
    case 'cancelled':
    case 'expired': {
      const error = run.error ? withoutStack(run.error) : undefined;
      const code = error?.code ?? (run.status === 'cancelled' ? 'CANCELLED' : 'RUN_NOT_RESUMABLE');
      const body: ErrorBody = {
        success: false,
        error: code,
        message: error?.message ?? `run ${run.id} ${run.status}`,
        details: { jobId: run.id, status: run.status, ...(error?.data ? { data: error.data } : {}) },
      };
      return jsonResponse(body, 422);
    }
    default: {
      // The run, or for a flow one of its steps, waits for an answer (POST /runs/:id/decisions).
      const [first] = settled.decisions;
      if (first) {
        const body: DecisionBody = {
          success: true,
          jobId: run.id,
          status: run.status,
          waitReason: 'decision',
          decision: first.request,
          ...(first.runId !== run.id ? { stepRunId: first.runId, stepId: first.stepId } : {}),
          ...(settled.decisions.length > 1 ? { decisions: settled.decisions } : {}),
        };
        return jsonResponse(body, 202);
      }
      return timeoutResponse(settled, wait, resumed);
    }
  }
}

/** 202 for async mode. */
export function acceptedResponse(run: RunRecord): Response {
  const body: AcceptedBody = { success: true, jobId: run.id, status: run.status };
  return jsonResponse(body, 202);
}
