/**
 * Reading and steering runs: `GET /runs` (status, limit, cursor), `GET /runs/:id` (the run, its
 * steps for a flow, the decision it waits on), `POST /runs/:id/decisions` (the answer, as
 * `baton decide` takes it) and `POST /runs/:id/cancel`.
 */
import { BatonError, isBatonError } from '../core/index.ts';
import { type OpenDecision, runMetaOf } from '../runtime/index.ts';
import type { CancelBody, ListQuery } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { type RunRow, runRow, selectRuns } from './run-selection.ts';
import { runView } from './run-views.ts';
import { jsonResponse } from './wire-errors.ts';

/** `GET /runs`: a page of runs, newest first. */
export interface RunPage {
  success: true;
  now: number;
  runs: RunRow[];
  nextCursor: string | null;
}

/** `GET /runs/:id`: the run, a flow's steps, a task's invoked children and its open questions. */
export interface RunDetails {
  success: true;
  now: number;
  run: RunRow;
  steps?: RunRow[];
  children?: RunRow[];
  decision: OpenDecision | null;
  /** Every open question when several steps ask at once. */
  decisions?: OpenDecision[];
}

export async function listRoute(rc: RouteContext, query: ListQuery): Promise<Response> {
  const { limit = 50, cursor, ...filter } = query;
  const { runs, nextCursor } = await selectRuns(rc, filter, { cursor, limit });
  const now = rc.clock.now();
  const page: RunPage = { success: true, now, runs: runs.map((r) => runRow(rc, r, now)), nextCursor };
  return jsonResponse(page);
}

export async function getRoute(rc: RouteContext, id: string): Promise<Response> {
  const run = await requireRun(rc, id);
  const steps = run.kind === 'flow' ? await rc.baton.listRuns({ parentId: id, limit: 10_000 }) : undefined;
  // Runs a task started with ctx.invoke.
  const children = run.kind === 'task' ? await rc.baton.listRuns({ parentId: id, limit: 10_000 }) : [];
  const decisions = await rc.baton.openDecisions(id);
  const now = rc.clock.now();
  const details: RunDetails = {
    success: true,
    now,
    run: runRow(rc, run, now),
    ...(steps ? { steps: steps.map((s) => runRow(rc, s, now)) } : {}),
    ...(children.length > 0 ? { children: children.map((c) => runRow(rc, c, now)) } : {}),
    decision: decisions[0] ?? null,
    ...(decisions.length > 1 ? { decisions } : {}),
  };
  return jsonResponse(details);
}

/** The body of `POST /runs/:id/decisions`: the answer, anything but empty or null. */
export function decisionAnswer(answer: unknown): NonNullable<unknown> {
  if (answer === undefined || answer === null)
    throw new BatonError(
      'INVALID_INPUT',
      'body must be the answer: a choice id like "retry_extended" or { "choice": ..., "mode"?, "input"? }',
      { data: { field: 'body' } },
    );
  return answer;
}

export async function decideRoute(rc: RouteContext, id: string, answer: unknown): Promise<Response> {
  try {
    const run = await rc.baton.decide(id, answer, rc.options.actor);
    return jsonResponse({ success: true, run: runView(run) });
  } catch (err) {
    throw await namingAnswerer(rc, id, err);
  }
}

/** POST /runs/:id/signals/:name — the body is the payload (JSON; empty means null). */
export async function signalRoute(
  rc: RouteContext,
  id: string,
  name: string,
  payload: unknown,
): Promise<Response> {
  const sent = await rc.baton.signal(id, name, payload);
  return jsonResponse({ success: true, signal: sent }, 202);
}

export async function cancelRoute(rc: RouteContext, id: string, body: CancelBody): Promise<Response> {
  await rc.baton.cancel(id, body.reason ?? `cancelled by ${rc.options.actor}`);
  return jsonResponse({ success: true, run: runView(await requireRun(rc, id)) });
}

export async function requireRun(rc: RouteContext, id: string) {
  const run = await rc.baton.getRun(id);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  return run;
}

/**
 * A lost race names who answered: when the question was already answered, the 409 carries the
 * winning answer, its author and time (`details.answeredBy`, `answeredAt`, `answer`).
 */
async function namingAnswerer(rc: RouteContext, id: string, err: unknown): Promise<unknown> {
  if (!isBatonError(err, 'RUN_CONFLICT')) return err;
  const run = await rc.baton.getRun(id);
  const last = run ? runMetaOf(run).decisions.at(-1) : undefined;
  if (!last) return err;
  return new BatonError('RUN_CONFLICT', `${err.message}; already answered by ${last.by} at ${last.at}`, {
    cause: err,
    data: { ...err.data, answeredBy: last.by, answeredAt: last.at, answer: last.answer },
  });
}
