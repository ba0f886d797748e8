/**
 * A typed client for Baton's HTTP API. Works with any `fetch` (Node, browsers, edge runtimes, or a
 * handler called in-process: `fetch: (url, init) => handler(new Request(url, init))`).
 */
import { BatonError, type BatonEvent, optionKeys, refuseUnknownKeys } from '../core/index.ts';
import { type Clock, type Duration, systemClock } from '../time/index.ts';
import { type EventsOptions, followEvents } from './follow-events.ts';
import { errorFromResponse } from './http-error.ts';
import {
  type BackoffOptions,
  type ResumeLoopOptions,
  type RunResult,
  resumeUntilDone,
} from './run-with-resume.ts';
import type {
  AcceptedBody,
  BulkAnswer,
  BulkRequestBody,
  CancelRequestBody,
  DecisionBody,
  DecisionsPage,
  DeliveriesPage,
  Health,
  Overview,
  ResumeRequestBody,
  RunDetails,
  RunFilter,
  RunPage,
  RunView,
  StartRequestBody,
  SuccessBody,
  SyncAnswer,
  Timeline,
  TimeoutBody,
} from './wire-types.ts';

export interface ClientOptions {
  /** The API's root, e.g. "http://127.0.0.1:8080" or "https://example.com/api". */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** For backoff sleeps and elapsed time. @default systemClock */
  clock?: Clock;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export interface StartRequest {
  /** Your own job id (a retried start with the same id is refused instead of duplicated). */
  id?: string;
  budget?: Duration;
  fast?: boolean;
  /** The research mode (codebase, docs, external, dual). */
  researchMode?: string;
}

export interface SyncRequest {
  /** How long the server may hold the request (capped by its maximum). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export type RunOptions = StartRequest & SyncRequest & ResumeLoopOptions;

/** The runs a bulk action touches: by id, or every run a filter selects. */
export type BulkTarget = ({ ids: string[] } | { filter: RunFilter }) & { dryRun?: boolean; reason?: string };

export interface BatonClient {
  /** Starts a task in async mode: 202 with the job id. */
  start(task: string, input?: unknown, options?: StartRequest): Promise<AcceptedBody>;
  /** Starts a flow (a registered name or a JSON plan) in async mode. */
  startFlow(
    flow: string | Record<string, unknown>,
    input?: unknown,
    options?: StartRequest,
  ): Promise<AcceptedBody>;
  /** One sync request: the result, the protocol's 408, or a pending decision. */
  call(task: string, input?: unknown, options?: StartRequest & SyncRequest): Promise<SyncAnswer>;
  /** One sync request for a flow (a registered name or a JSON plan); a step's question comes back as a decision. */
  callFlow(
    flow: string | Record<string, unknown>,
    input?: unknown,
    options?: StartRequest & SyncRequest,
  ): Promise<SyncAnswer>;
  /** Runs a task to its end, resuming automatically on 408 with backoff. */
  run(task: string, input?: unknown, options?: RunOptions): Promise<RunResult>;
  /** Runs a flow (a registered name or a JSON plan) to its end, resuming automatically on 408. */
  runFlow(flow: string | Record<string, unknown>, input?: unknown, options?: RunOptions): Promise<RunResult>;
  /** Resumes a job (sync): its result, another 408, or its cached result when already done. */
  resume(id: string, options?: SyncRequest): Promise<SyncAnswer>;
  /** Resumes a job in async mode. */
  resumeAsync(id: string): Promise<AcceptedBody>;
  get(id: string): Promise<RunDetails>;
  list(query?: RunFilter & { limit?: number; cursor?: string }): Promise<RunPage>;
  /** Everything the run page draws, in one request (events optionally filtered by type). */
  timeline(id: string, query?: { types?: string[]; limit?: number }): Promise<Timeline>;
  /** Every open question across all runs, with the policy's answer and its timeout. */
  decisions(query?: { limit?: number }): Promise<DecisionsPage>;
  /** Scheduled deliveries: upcoming (default) or all, newest first. */
  deliveries(query?: {
    state?: 'upcoming' | 'all';
    limit?: number;
    cursor?: string;
  }): Promise<DeliveriesPage>;
  overview(): Promise<Overview>;
  /** Cancels the runs named or selected; `dryRun` only counts them. */
  bulkCancel(target: BulkTarget): Promise<BulkAnswer>;
  /** Resumes the failed, partial or cancelled runs named or selected; `dryRun` only counts them. */
  bulkResume(target: BulkTarget): Promise<BulkAnswer>;
  /** Every run's events (live; from `afterId` when given) over SSE, reconnecting with Last-Event-ID. */
  allEvents(options?: EventsOptions & { types?: string[] }): AsyncGenerator<BatonEvent>;
  decide(id: string, answer: unknown): Promise<RunView>;
  cancel(id: string, reason?: string): Promise<RunView>;
  /** The run's events (past, then live) over SSE, reconnecting with Last-Event-ID. */
  events(id: string, options?: EventsOptions): AsyncGenerator<BatonEvent>;
  health(): Promise<Health>;
  /** The Prometheus text. */
  metrics(): Promise<string>;
}

function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}

/**
 * The keys each options object takes: a typo (`budgt`, `tokn`) would otherwise be dropped without a
 * word — a run started without its budget, a client without its token.
 */
const CLIENT_KEYS = optionKeys<ClientOptions>()('baseUrl', 'token', 'fetch', 'clock', 'headers');
const START_KEYS = optionKeys<StartRequest>()('id', 'budget', 'fast', 'researchMode');
const SYNC_KEYS = optionKeys<SyncRequest>()('timeoutMs', 'signal');
const LOOP_KEYS = optionKeys<ResumeLoopOptions>()(
  'maxResumes',
  'backoff',
  'maxTurns',
  'onProgress',
  'signal',
);
const BACKOFF_KEYS = optionKeys<BackoffOptions>()('initialMs', 'factor', 'maxMs');
const EVENTS_KEYS = optionKeys<EventsOptions>()(
  'afterId',
  'follow',
  'signal',
  'maxReconnects',
  'reconnectDelayMs',
);
const CALL_KEYS = [...START_KEYS, ...SYNC_KEYS];
const RUN_KEYS = [...new Set([...CALL_KEYS, ...LOOP_KEYS])];

function checkRunOptions(o: RunOptions | undefined, field: string): void {
  refuseUnknownKeys(o, RUN_KEYS, field);
  if (o?.backoff) refuseUnknownKeys(o.backoff, BACKOFF_KEYS, `${field}.backoff`);
}

export function createClient(options: ClientOptions): BatonClient {
  refuseUnknownKeys(options, CLIENT_KEYS, 'client options');
  if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl))
    throw new BatonError(
      'INVALID_OPTION',
      `baseUrl must be an http(s) URL, got ${JSON.stringify(options?.baseUrl)}`,
      {
        data: { field: 'baseUrl' },
      },
    );
  const base = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const clock = options.clock ?? systemClock;
  const headers = (extra: Record<string, string> = {}) => ({
    ...options.headers,
    ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
    ...extra,
  });
  const url = (path: string) => `${base}${path}`;
  const runPath = (id: string, rest = '') => `/runs/${encodeURIComponent(id)}${rest}`;

  async function send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    return doFetch(url(path), {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  }

  async function expect<T>(response: Response, status: number): Promise<T> {
    if (response.status !== status) throw await errorFromResponse(response);
    return (await response.json()) as T;
  }

  async function syncAnswer(response: Response): Promise<SyncAnswer> {
    if (response.status === 200) return { kind: 'result', body: (await response.json()) as SuccessBody };
    if (response.status === 408) return { kind: 'timeout', body: (await response.json()) as TimeoutBody };
    if (response.status === 202) {
      const body = (await response.json()) as DecisionBody | AcceptedBody;
      if ('waitReason' in body && body.waitReason === 'decision') return { kind: 'decision', body };
      throw new BatonError('UNKNOWN', `expected a sync answer, got 202 for job ${body.jobId}`);
    }
    throw await errorFromResponse(response);
  }

  // Bodies typed by the server's request schemas (StartRequestBody, …): no second copy to drift.
  const startBody = (
    target: { task: string } | { flow: string | Record<string, unknown> },
    input: unknown,
    o: StartRequest & SyncRequest = {},
  ): StartRequestBody => ({
    ...target,
    ...(input !== undefined ? { input } : {}),
    ...(o.id !== undefined ? { id: o.id } : {}),
    ...(o.budget !== undefined ? { budget: o.budget } : {}),
    ...(o.fast !== undefined ? { fast: o.fast } : {}),
    ...(o.researchMode !== undefined ? { researchMode: o.researchMode } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  });

  /** One sync request (options already checked by the caller). */
  const sync = async (
    target: { task: string } | { flow: string | Record<string, unknown> },
    input: unknown,
    o: StartRequest & SyncRequest,
  ) => syncAnswer(await send('POST', '/runs', { ...startBody(target, input, o), mode: 'sync' }, o.signal));

  /** After the first sync answer: resume on 408 (and wait out 409) until the job answers. */
  const untilDone = (first: SyncAnswer, o: RunOptions): Promise<RunResult> => {
    const resumeOptions = o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {};
    return resumeUntilDone(
      {
        clock,
        resume: (id) => client.resume(id, { ...resumeOptions, ...(o.signal ? { signal: o.signal } : {}) }),
        get: (id) => client.get(id),
      },
      first,
      o,
    );
  };

  const client: BatonClient = {
    async start(task, input, o) {
      refuseUnknownKeys(o, START_KEYS, 'start options');
      return expect(await send('POST', '/runs', { ...startBody({ task }, input, o), mode: 'async' }), 202);
    },
    async startFlow(flow, input, o) {
      refuseUnknownKeys(o, START_KEYS, 'startFlow options');
      return expect(await send('POST', '/runs', { ...startBody({ flow }, input, o), mode: 'async' }), 202);
    },
    async call(task, input, o = {}) {
      refuseUnknownKeys(o, CALL_KEYS, 'call options');
      return sync({ task }, input, o);
    },
    async callFlow(flow, input, o = {}) {
      refuseUnknownKeys(o, CALL_KEYS, 'callFlow options');
      return sync({ flow }, input, o);
    },
    async run(task, input, o = {}) {
      checkRunOptions(o, 'run options');
      return untilDone(await sync({ task }, input, o), o);
    },
    async runFlow(flow, input, o = {}) {
      checkRunOptions(o, 'runFlow options');
      return untilDone(await sync({ flow }, input, o), o);
    },
    async resume(id, o = {}) {
      refuseUnknownKeys(o, SYNC_KEYS, 'resume options');
      const body: ResumeRequestBody | undefined =
        o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : undefined;
      return syncAnswer(await send('POST', runPath(id, '/resume'), body, o.signal));
    },
    async resumeAsync(id) {
      return expect(await send('POST', runPath(id, '/resume?mode=async')), 202);
    },
    async get(id) {
      return expect(await send('GET', runPath(id)), 200);
    },
    async list(query = {}) {
      return expect(await send('GET', `/runs${queryString(query)}`), 200);
    },
    async timeline(id, query = {}) {
      const qs = queryString({ types: query.types?.join(','), limit: query.limit });
      return expect(await send('GET', runPath(id, `/timeline${qs}`)), 200);
    },
    async decisions(query = {}) {
      return expect(await send('GET', `/decisions${queryString(query)}`), 200);
    },
    async deliveries(query = {}) {
      return expect(await send('GET', `/deliveries${queryString(query)}`), 200);
    },
    async overview() {
      return expect(await send('GET', '/overview'), 200);
    },
    async bulkCancel(target) {
      return expect(await send('POST', '/bulk/cancel', target satisfies BulkRequestBody), 200);
    },
    async bulkResume(target) {
      return expect(await send('POST', '/bulk/resume', target satisfies BulkRequestBody), 200);
    },
    allEvents(o = {}) {
      refuseUnknownKeys(o, [...EVENTS_KEYS, 'types'], 'allEvents options');
      const { types, ...rest } = o;
      return followEvents({ url, fetch: doFetch, headers, clock }, null, {
        ...rest,
        ...(types ? { query: { types: types.join(',') } } : {}),
      });
    },
    async decide(id, answer) {
      return (await expect<{ run: RunView }>(await send('POST', runPath(id, '/decisions'), answer), 200)).run;
    },
    async cancel(id, reason) {
      const body: CancelRequestBody | undefined = reason !== undefined ? { reason } : undefined;
      return (await expect<{ run: RunView }>(await send('POST', runPath(id, '/cancel'), body), 200)).run;
    },
    events(id, o) {
      refuseUnknownKeys(o, EVENTS_KEYS, 'events options');
      return followEvents({ url, fetch: doFetch, headers, clock }, id, o);
    },
    async health() {
      const response = await send('GET', '/health');
      if (response.status !== 200 && response.status !== 503) throw await errorFromResponse(response);
      return (await response.json()) as Health;
    },
    async metrics() {
      const response = await send('GET', '/metrics');
      if (!response.ok) throw await errorFromResponse(response);
      return response.text();
    },
  };
  return client;
}
