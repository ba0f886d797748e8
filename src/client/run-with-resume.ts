/**
 * `client.run`: one sync request, then — on the protocol's 408 — resumes by job id after a backoff
 * until the job answers, reporting progress (turns, requests, an estimated time remaining) as it
 * goes. A 409 (someone else is resuming the same job) is waited out the same way.
 */
import type { Clock } from '../time/index.ts';
import { estimateRemainingMs } from './estimate-remaining.ts';
import { BatonHttpError } from './http-error.ts';
import type { RunDetails, SuccessBody, SyncAnswer, TimeoutBody } from './wire-types.ts';

export interface BackoffOptions {
  /** @default 250 */
  initialMs?: number;
  /** @default 2 */
  factor?: number;
  /** @default 10_000 */
  maxMs?: number;
}

export interface RunProgress {
  jobId: string;
  /** timeout: an invocation hit its limit; conflict: someone else holds the job; resuming: a resume was sent; done: the answer came. */
  phase: 'timeout' | 'conflict' | 'resuming' | 'done';
  /** Requests sent so far (the start and every resume). */
  requests: number;
  resumes: number;
  /** Agent turns done in all invocations so far (null when unknown). */
  turns: number | null;
  toolCalls: number | null;
  elapsedMs: number;
  /** See estimateRemainingMs: null when there is nothing to go on yet. */
  estimatedRemainingMs: number | null;
}

export interface ResumeLoopOptions {
  /** Resumes (after 408 or 409) before giving up with the last error. @default 20 */
  maxResumes?: number;
  backoff?: BackoffOptions;
  /** The agent's turn limit, for the estimated time remaining. */
  maxTurns?: number;
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
}

export type RunResult =
  | {
      status: 'succeeded' | 'partial';
      jobId: string;
      result: unknown;
      metadata: SuccessBody['metadata'];
      requests: number;
      resumes: number;
      elapsedMs: number;
    }
  | {
      status: 'waiting';
      jobId: string;
      decision: unknown;
      requests: number;
      resumes: number;
      elapsedMs: number;
    };

export interface ResumeLoopDeps {
  clock: Clock;
  resume(id: string): Promise<SyncAnswer>;
  get(id: string): Promise<RunDetails>;
}

export function backoffMs(options: BackoffOptions, n: number): number {
  const initial = options.initialMs ?? 250;
  const factor = options.factor ?? 2;
  const max = options.maxMs ?? 10_000;
  return Math.min(max, Math.round(initial * factor ** Math.max(0, n - 1)));
}

/** Drives a job from its first sync answer to its result, resuming on 408 and waiting out 409. */
export async function resumeUntilDone(
  deps: ResumeLoopDeps,
  first: SyncAnswer,
  options: ResumeLoopOptions = {},
): Promise<RunResult> {
  const startedAt = deps.clock.monotonic();
  const maxResumes = options.maxResumes ?? 20;
  let answer: SyncAnswer = first;
  let requests = 1;
  let resumes = 0;
  let invocations = 0;
  let invocationMs = 0;
  let turns: number | null = null;
  let toolCalls: number | null = null;
  let lastTimeout: TimeoutBody | undefined;
  let conflict: BatonHttpError | undefined;
  const jobIdOf = () =>
    answer.kind === 'result'
      ? answer.body.metadata.jobId
      : answer.kind === 'timeout'
        ? answer.body.details.jobId
        : answer.body.jobId;
  const report = (phase: RunProgress['phase'], nextDelayMs: number) =>
    options.onProgress?.({
      jobId: jobIdOf(),
      phase,
      requests,
      resumes,
      turns,
      toolCalls,
      elapsedMs: Math.round(deps.clock.monotonic() - startedAt),
      estimatedRemainingMs:
        phase === 'done'
          ? 0
          : estimateRemainingMs({
              turns,
              maxTurns: options.maxTurns,
              invocations,
              invocationMs,
              nextDelayMs,
            }),
    });

  for (;;) {
    if (!conflict && answer.kind === 'result') {
      turns = answer.body.metadata.turns ?? turns;
      toolCalls = answer.body.metadata.toolCalls ?? toolCalls;
      report('done', 0);
      return {
        status: answer.body.partial ? 'partial' : 'succeeded',
        jobId: answer.body.metadata.jobId,
        result: answer.body.result,
        metadata: answer.body.metadata,
        requests,
        resumes,
        elapsedMs: Math.round(deps.clock.monotonic() - startedAt),
      };
    }
    if (!conflict && answer.kind === 'decision') {
      const elapsedMs = Math.round(deps.clock.monotonic() - startedAt);
      return {
        status: 'waiting',
        jobId: answer.body.jobId,
        decision: answer.body.decision,
        requests,
        resumes,
        elapsedMs,
      };
    }
    if (!conflict && answer.kind === 'timeout') {
      lastTimeout = answer.body;
      invocations++;
      invocationMs += answer.body.details.durationMs;
      if (options.onProgress)
        ({ turns, toolCalls } = await countersOf(deps, answer.body.details.jobId, turns, toolCalls));
    }
    if (resumes >= maxResumes) {
      if (conflict) throw conflict;
      const body = lastTimeout as TimeoutBody;
      throw new BatonHttpError(
        408,
        body.error,
        `gave up after ${resumes} resumes: ${body.message}`,
        body.details,
      );
    }
    const delay = backoffMs(options.backoff ?? {}, resumes + 1);
    report(conflict ? 'conflict' : 'timeout', delay);
    await deps.clock.sleep(delay, options.signal);
    resumes++;
    requests++;
    report('resuming', 0);
    try {
      answer = await deps.resume(jobIdOf());
      conflict = undefined;
    } catch (err) {
      // Someone else resumed the job first: wait for them, then ask again (we get its result).
      if (!(err instanceof BatonHttpError && err.status === 409)) throw err;
      conflict = err;
    }
  }
}

/** Turns and tool calls so far, as the parked run records them (`run.meta.invocation`). */
async function countersOf(
  deps: ResumeLoopDeps,
  jobId: string,
  turns: number | null,
  toolCalls: number | null,
): Promise<{ turns: number | null; toolCalls: number | null }> {
  try {
    const { run } = await deps.get(jobId);
    const invocation = (run.meta.invocation ?? {}) as { turns?: unknown; toolCalls?: unknown };
    return {
      turns: typeof invocation.turns === 'number' ? invocation.turns : turns,
      toolCalls: typeof invocation.toolCalls === 'number' ? invocation.toolCalls : toolCalls,
    };
  } catch {
    // Progress is best effort; the resume itself decides.
    return { turns, toolCalls };
  }
}
