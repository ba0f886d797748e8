/**
 * Starting and resuming jobs: `POST /runs` (a task, a flow, or the protocol's `{ resumeJobId }`)
 * and `POST /runs/:id/resume`. Resumes are strict: exactly one of many concurrent callers requeues
 * the job, the others get 409 naming the holder; a finished job answers with its cached result.
 */
import { BatonError, formatTraceparent, isBatonError, parseTraceparent } from '../core/index.ts';
import {
  type Baton,
  type FlowDefinition,
  loadPlan,
  runMetaOf,
  runOptionsOf,
  type StartOptions,
} from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import type { ResolvedHttpOptions } from './http-options.ts';
import {
  FlatRequest,
  type ModeQuery,
  parseRequest,
  type ResumeBody,
  type StartBody,
} from './request-schemas.ts';
import type { BatonMetrics } from './run-metrics.ts';
import {
  acceptedResponse,
  resultResponse,
  type SyncWait,
  settledResponse,
  waitUntilSettled,
} from './sync-outcome.ts';

export interface RouteContext {
  baton: Baton;
  clock: Clock;
  options: ResolvedHttpOptions;
  metrics: BatonMetrics;
}

const START_ONLY = ['task', 'flow', 'input', 'id', 'budget', 'fast', 'researchMode'] as const;

export async function startRoute(rc: RouteContext, request: Request, body: StartBody): Promise<Response> {
  const arrivedAt = rc.clock.monotonic();
  if (body.resumeJobId !== undefined) {
    const extra = START_ONLY.find((k) => body[k] !== undefined);
    if (extra)
      throw new BatonError('INVALID_INPUT', `body.${extra} cannot be given with body.resumeJobId`, {
        data: { field: `body.${extra}` },
      });
    return resumeJob(rc, request, body.resumeJobId, body.mode ?? 'sync', body.timeoutMs, arrivedAt);
  }
  if ((body.task === undefined) === (body.flow === undefined))
    throw new BatonError('INVALID_INPUT', 'body must give exactly one of task, flow or resumeJobId', {
      data: { field: body.task === undefined ? 'body.task' : 'body.flow' },
    });
  const options: StartOptions = {
    ...(body.id !== undefined ? { id: body.id } : {}),
    ...(body.budget !== undefined ? { budget: body.budget } : {}),
    ...(body.fast !== undefined ? { fast: body.fast } : {}),
    ...(body.researchMode !== undefined ? { mode: body.researchMode } : {}),
    ...invocationOptions(rc, request),
  };
  const handle =
    body.task !== undefined
      ? await rc.baton.start(body.task, body.input, options)
      : await rc.baton.start(
          flowOf(rc.options, body.flow as string | Record<string, unknown>),
          body.input,
          options,
        );
  const run = await requireRun(rc.baton, handle.id);
  if (body.mode === 'async') return acceptedResponse(run);
  return answerWhenSettled(rc, request, run, body.timeoutMs, arrivedAt, false);
}

/**
 * `POST /tasks/:name`: protocol 003's flat request — the task's input fields at the top level
 * (`{ "systemId": "sys_123", "customPrompt": "…", "mode": "sync" }`), as posted to the function's
 * own URL. `mode`, `timeoutMs` and `resumeJobId` are the request's; every other field is input.
 */
export async function taskRoute(
  rc: RouteContext,
  request: Request,
  name: string,
  { request: request_, input }: FlatTaskBody,
): Promise<Response> {
  const arrivedAt = rc.clock.monotonic();
  if (request_.resumeJobId !== undefined) {
    const [extra] = Object.keys(input);
    if (extra !== undefined)
      throw new BatonError('INVALID_INPUT', `body.${extra} cannot be given with body.resumeJobId`, {
        data: { field: `body.${extra}` },
      });
    const run = await requireRun(rc.baton, request_.resumeJobId);
    if (run.name !== name)
      throw new BatonError('INVALID_INPUT', `job ${run.id} is a run of "${run.name}", not of "${name}"`, {
        data: { field: 'body.resumeJobId' },
      });
    return resumeJob(rc, request, run.id, request_.mode ?? 'sync', request_.timeoutMs, arrivedAt);
  }
  const handle = await rc.baton.start(name, input, invocationOptions(rc, request));
  const run = await requireRun(rc.baton, handle.id);
  if (request_.mode === 'async') return acceptedResponse(run);
  return answerWhenSettled(rc, request, run, request_.timeoutMs, arrivedAt, false);
}

/** A flat 003 body split: the request's own fields (checked) and the task's input (the rest). */
export interface FlatTaskBody {
  request: FlatRequest;
  input: Record<string, unknown>;
}

/** The body of `POST /tasks/:name`: a JSON object of the task's input fields and the request's own. */
export function flatTaskBody(raw: unknown): FlatTaskBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new BatonError('INVALID_INPUT', "body must be a JSON object of the task's input fields", {
      data: { field: 'body' },
    });
  const { mode, timeoutMs, resumeJobId, ...input } = raw as Record<string, unknown>;
  const request = parseRequest(
    FlatRequest,
    {
      ...(mode !== undefined ? { mode } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(resumeJobId !== undefined ? { resumeJobId } : {}),
    },
    'body',
  );
  return { request, input };
}

export async function resumeRoute(
  rc: RouteContext,
  request: Request,
  id: string,
  query: ModeQuery,
  body: ResumeBody,
): Promise<Response> {
  const arrivedAt = rc.clock.monotonic();
  return resumeJob(rc, request, id, query.mode ?? body.mode ?? 'sync', body.timeoutMs, arrivedAt);
}

async function resumeJob(
  rc: RouteContext,
  request: Request,
  id: string,
  mode: 'sync' | 'async',
  timeoutMs: number | undefined,
  arrivedAt: number,
): Promise<Response> {
  let resumed: Awaited<ReturnType<Baton['resume']>>['resumed'];
  try {
    ({ resumed } = await rc.baton.resume(id, rc.options.actor, { strict: true }));
  } catch (err) {
    throw namingHolder(err);
  }
  if (resumed.action === 'already_succeeded') return resultResponse(resumed.run, false, true);
  rc.metrics.resumeArrived(id, arrivedAt);
  if (mode === 'async') return acceptedResponse(resumed.run);
  return answerWhenSettled(rc, request, resumed.run, timeoutMs, arrivedAt, true);
}

async function answerWhenSettled(
  rc: RouteContext,
  request: Request,
  run: RunRecord,
  timeoutMs: number | undefined,
  arrivedAt: number,
  resumed: boolean,
): Promise<Response> {
  const wait: SyncWait = {
    jobId: run.id,
    arrivedAt,
    waitMs: syncWaitMs(rc, run, timeoutMs),
    signal: request.signal,
  };
  const settled = await waitUntilSettled(rc.baton, rc.clock, wait);
  return settledResponse(settled, wait, resumed);
}

/**
 * How long a sync request waits: its own `timeoutMs`, else the run's invocation timeout plus a
 * grace for the engine to park or finish it; never more than the server's maximum.
 */
export function syncWaitMs(rc: RouteContext, run: RunRecord, requested: number | undefined): number {
  if (requested !== undefined) return Math.min(requested, rc.options.maxSyncWaitMs);
  const invocation = invocationTimeoutMs(rc.baton, run);
  return Math.min(
    invocation === undefined ? rc.options.maxSyncWaitMs : invocation + rc.options.syncGraceMs,
    rc.options.maxSyncWaitMs,
  );
}

/** The timeout the run's next attempt gets, as the engine computes it (mode, fast mode, retries). */
export function invocationTimeoutMs(
  baton: Baton,
  run: Pick<RunRecord, 'kind' | 'name' | 'meta' | 'options' | 'budgetMs'>,
): number | undefined {
  if (run.kind === 'flow') return run.budgetMs ?? undefined;
  const task = baton.internals.tasks.get(run.name);
  if (!task) return undefined;
  const meta = runMetaOf(run);
  const options = runOptionsOf(run);
  const mode = meta.modeOverride ?? options.mode ?? task.mode;
  const fromPolicy =
    meta.timeoutOverrideMs ??
    task.policy({ mode, fast: options.fast === true }).attemptTimeoutMs(meta.failures + 1);
  const cap = options.invocationTimeoutMs;
  return cap !== undefined ? Math.min(fromPolicy, cap) : fromPolicy;
}

function flowOf(options: ResolvedHttpOptions, flow: string | Record<string, unknown>): FlowDefinition {
  if (typeof flow === 'string') {
    const known = options.flows.get(flow);
    if (!known)
      throw new BatonError(
        'TASK_NOT_FOUND',
        `unknown flow "${flow}" (registered: ${[...options.flows.keys()].join(', ') || 'none'}); or send a JSON plan`,
        { data: { field: 'body.flow', flow } },
      );
    return known;
  }
  const name = typeof flow.name === 'string' && flow.name !== '' ? flow.name : 'plan';
  return loadPlan(flow, name);
}

/** What a started run keeps of the request: the server's invocation cap and the caller's trace. */
function invocationOptions(rc: RouteContext, request: Request): StartOptions {
  // The caller's W3C trace context is kept with the run (baton/otel makes it the run span's parent).
  const traceparent = parseTraceparent(request.headers.get('traceparent'));
  return {
    ...(rc.options.invocationTimeoutMs !== undefined
      ? { invocationTimeout: rc.options.invocationTimeoutMs }
      : {}),
    ...(traceparent ? { traceparent: formatTraceparent(traceparent) } : {}),
  };
}

async function requireRun(baton: Baton, id: string): Promise<RunRecord> {
  const run = await baton.getRun(id);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  return run;
}

/** A resume conflict always names who holds the job ("queued" when no worker has claimed it yet). */
function namingHolder(err: unknown): unknown {
  if (!isBatonError(err, 'RUN_CONFLICT')) return err;
  const status = err.data.status;
  const holder = err.data.holder ?? (status === 'queued' ? 'queued' : undefined);
  if (typeof holder !== 'string') return err;
  if (err.data.holder === holder && err.message.includes(holder)) return err;
  return new BatonError('RUN_CONFLICT', `${err.message}; held by ${holder}`, {
    cause: err,
    data: { ...err.data, holder },
  });
}
