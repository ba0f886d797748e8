/**
 * The HTTP handler inside a function with a hard platform limit (Netlify, Vercel, Lambda, Cloud
 * Run): a sync request waits at most `limit − safetyMargin` from its arrival, and runs started or
 * resumed through it are asked to stop their invocation by then too, so the agent saves its
 * checkpoint and the 408 goes out before the platform would kill the process. The client resumes
 * with the job id, possibly in a fresh process on the same store.
 */
import { BatonError, refuseUnknownKeys } from '../core/index.ts';
import {
  createHttpHandler,
  HTTP_OPTION_KEYS,
  type HttpHandler,
  type HttpOptions,
  invocationTimeoutMs,
} from '../http/index.ts';
import type { Baton } from '../runtime/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

export interface ServerlessOptions
  extends Omit<HttpOptions, 'maxSyncWaitMs' | 'invocationTimeoutMs' | 'syncGraceMs'> {
  /** The platform's limit on one invocation (e.g. 10_000 or "26s"). */
  limitMs: Duration;
  /** Kept free before the limit for the checkpoint, the 408 and the platform's own overhead. @default 5000 */
  safetyMarginMs?: Duration;
}

export interface ServerlessHandler extends HttpHandler {
  /** How long a sync request may take here: `limitMs − safetyMarginMs`. */
  readonly deadlineMs: number;
  /**
   * Tasks whose invocation timeout is longer than the deadline, by name: their runs would be cut
   * by the platform before their own pre-deadline checkpoint unless the engine honours the
   * `invocationTimeoutMs` run option this handler sets.
   */
  tasksOverDeadline(): string[];
}

/**
 * The handler's options but the three this adapter sets from the limit (a `maxSyncWaitMs` given here
 * would be overridden, so it is refused like a typo), plus the limit and its margin.
 */
const SET_FROM_LIMIT = ['maxSyncWaitMs', 'invocationTimeoutMs', 'syncGraceMs'];
const SERVERLESS_KEYS: readonly string[] = [
  ...HTTP_OPTION_KEYS.filter((k) => !SET_FROM_LIMIT.includes(k)),
  'limitMs',
  'safetyMarginMs',
];

export function createServerlessHandler(baton: Baton, options: ServerlessOptions): ServerlessHandler {
  refuseUnknownKeys(options, SERVERLESS_KEYS, 'serverless options');
  if (typeof options !== 'object' || options === null || options.limitMs === undefined)
    throw new BatonError(
      'INVALID_OPTION',
      'limitMs is required: the platform limit of one invocation, e.g. "26s"',
      {
        data: { field: 'limitMs' },
      },
    );
  const { limitMs: limit, safetyMarginMs: margin, ...http } = options;
  const limitMs = parseDuration(limit, 'limitMs');
  const safetyMarginMs = parseDuration(margin ?? 5_000, 'safetyMarginMs');
  const deadlineMs = Math.floor(limitMs - safetyMarginMs);
  if (!(deadlineMs > 0))
    throw new BatonError(
      'INVALID_OPTION',
      `safetyMarginMs (${safetyMarginMs}) must be below limitMs (${limitMs}), leaving time for the work itself`,
      { data: { field: 'safetyMarginMs' } },
    );
  const handler = createHttpHandler(baton, {
    ...http,
    maxSyncWaitMs: deadlineMs,
    syncGraceMs: 0,
    invocationTimeoutMs: deadlineMs,
  });
  return Object.assign(handler, {
    deadlineMs,
    tasksOverDeadline: () =>
      baton.internals.tasks
        .names()
        .filter(
          (name) =>
            (invocationTimeoutMs(baton, { kind: 'task', name, meta: {}, options: {}, budgetMs: null }) ?? 0) >
            deadlineMs,
        ),
  });
}
