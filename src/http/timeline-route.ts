/**
 * `GET /runs/:id/timeline`: everything the run page draws, in one request — the run with its budget
 * and retry plan, a flow's steps, the events (counted per type, optionally filtered by type),
 * checkpoints with their validation, partial results, memoized step results, deliveries and the
 * open questions. For a flow the records of every step are included, each naming its run.
 */
import type { BatonEvent } from '../core/index.ts';
import type { DeliveryRecord, PartialRecord, RunRecord, StepRecord } from '../store/index.ts';
import { requireRun } from './read-routes.ts';
import type { TimelineQuery } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { type RunRow, runRow } from './run-selection.ts';
import { jsonResponse } from './wire-errors.ts';

export interface CheckpointView {
  runId: string;
  seq: number;
  attempt: number;
  /** The protocol's checkpoint document (checkpoint_id, progress_percentage, time_assessment, …). */
  record: Record<string, unknown>;
  state: unknown;
  createdAt: number;
  /** Why it cannot be used (unreadable, another task version, the task's schema refused it). */
  invalid: string | null;
}

export interface Timeline {
  success: true;
  now: number;
  run: RunRow;
  steps: RunRow[];
  events: BatonEvent[];
  /** Events of each type in the run (before the `types` filter). */
  eventCounts: Record<string, number>;
  /** More events exist than `limit`; the first `limit` are here. */
  truncated: boolean;
  checkpoints: CheckpointView[];
  partials: PartialRecord[];
  memo: StepRecord[];
  deliveries: DeliveryRecord[];
  decisions: Awaited<ReturnType<RouteContext['baton']['openDecisions']>>;
}

/** Keeps events whose type is listed, or starts with a listed prefix ending in ":". */
export function typeFilter(types: string | undefined): (e: BatonEvent) => boolean {
  const wanted = types?.split(',').filter((t) => t !== '');
  if (!wanted?.length) return () => true;
  return (e) => wanted.some((t) => (t.endsWith(':') ? e.type.startsWith(t) : e.type === t));
}

async function readAll(rc: RouteContext, run: RunRecord, limit: number) {
  const query = run.rootId === run.id ? { rootId: run.id } : { runId: run.id };
  const events: BatonEvent[] = [];
  let afterId = 0;
  for (;;) {
    const batch = await rc.baton.store.readEvents({ ...query, afterId, limit: Math.min(10_000, limit + 1) });
    events.push(...batch);
    const last = batch.at(-1);
    if (!last || events.length > limit || batch.length < Math.min(10_000, limit + 1)) break;
    afterId = last.id;
  }
  return { events: events.slice(0, limit), truncated: events.length > limit };
}

export async function timelineRoute(rc: RouteContext, id: string, query: TimelineQuery): Promise<Response> {
  const run = await requireRun(rc, id);
  const store = rc.baton.store;
  const steps = run.kind === 'flow' ? await store.listRuns({ parentId: id, limit: 10_000 }) : [];
  const owners = [run, ...steps];
  const invalid = new Map<string, string>();
  const [{ events, truncated }, checkpoints, partials, memo, deliveries, decisions] = await Promise.all([
    readAll(rc, run, query.limit ?? 10_000),
    Promise.all(owners.map((r) => store.listCheckpoints(r.id))),
    Promise.all(owners.map((r) => store.listPartials(r.id))),
    Promise.all(owners.map((r) => store.getSteps(r.id))),
    Promise.all(owners.map((r) => store.listDeliveries(r.id))),
    rc.baton.openDecisions(id),
  ]);
  const eventCounts: Record<string, number> = {};
  for (const e of events) {
    eventCounts[e.type] = (eventCounts[e.type] ?? 0) + 1;
    if (e.type === 'checkpoint:invalid') {
      const d = e.data as BatonEvent<'checkpoint:invalid'>['data'];
      invalid.set(`${e.runId}#${d.seq}`, d.reason);
    }
  }
  const now = rc.clock.now();
  const body: Timeline = {
    success: true,
    now,
    run: runRow(rc, run, now),
    steps: steps.map((s) => runRow(rc, s, now)),
    events: events.filter(typeFilter(query.types)),
    eventCounts,
    truncated,
    checkpoints: checkpoints.flat().map((c) => ({
      runId: c.runId,
      seq: c.seq,
      attempt: c.attempt,
      record: c.record,
      state: c.state,
      createdAt: c.createdAt,
      invalid: c.corrupt ?? invalid.get(`${c.runId}#${c.seq}`) ?? null,
    })),
    partials: partials.flat(),
    memo: memo.flat(),
    deliveries: deliveries.flat(),
    decisions,
  };
  return jsonResponse(body);
}
