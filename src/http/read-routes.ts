/**
 * Reading and steering runs: `GET /runs` (status, limit, cursor), `GET /runs/:id` (the run, its
 * steps for a flow, the decision it waits on), `POST /runs/:id/decisions` (the answer, as
 * `baton decide` takes it) and `POST /runs/:id/cancel`.
 */
import { BatonError } from '../core/index.ts';
import { readJsonBody } from './read-json-body.ts';
import { CancelBody, ListQuery, parseRequest, queryOf } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { runView } from './run-views.ts';
import { jsonResponse } from './wire-errors.ts';

export async function listRoute(rc: RouteContext, request: Request): Promise<Response> {
  const query = parseRequest(ListQuery, queryOf(new URL(request.url)), 'query');
  const limit = query.limit ?? 50;
  const runs = await rc.baton.listRuns({
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.name !== undefined ? { name: query.name } : {}),
    ...(query.cursor !== undefined ? { beforeId: query.cursor } : {}),
    limit,
  });
  const last = runs.at(-1);
  return jsonResponse({
    success: true,
    runs: runs.map(runView),
    nextCursor: runs.length === limit && last ? last.id : null,
  });
}

export async function getRoute(rc: RouteContext, id: string): Promise<Response> {
  const run = await requireRun(rc, id);
  const steps = run.kind === 'flow' ? await rc.baton.listRuns({ parentId: id, limit: 10_000 }) : undefined;
  const decisions = await rc.baton.openDecisions(id);
  return jsonResponse({
    success: true,
    run: runView(run),
    ...(steps ? { steps: steps.map(runView) } : {}),
    decision: decisions[0] ?? null,
    ...(decisions.length > 1 ? { decisions } : {}),
  });
}

export async function decideRoute(rc: RouteContext, request: Request, id: string): Promise<Response> {
  const answer = await readJsonBody(request, rc.options.bodyLimitBytes);
  if (answer === undefined || answer === null)
    throw new BatonError(
      'INVALID_INPUT',
      'body must be the answer: a choice id like "retry_extended" or { "choice": ..., "mode"?, "input"? }',
      { data: { field: 'body' } },
    );
  const run = await rc.baton.decide(id, answer, rc.options.actor);
  return jsonResponse({ success: true, run: runView(run) });
}

export async function cancelRoute(rc: RouteContext, request: Request, id: string): Promise<Response> {
  const body = parseRequest(
    CancelBody,
    (await readJsonBody(request, rc.options.bodyLimitBytes)) ?? {},
    'body',
  );
  await rc.baton.cancel(id, body.reason ?? `cancelled by ${rc.options.actor}`);
  return jsonResponse({ success: true, run: runView(await requireRun(rc, id)) });
}

async function requireRun(rc: RouteContext, id: string) {
  const run = await rc.baton.getRun(id);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  return run;
}
