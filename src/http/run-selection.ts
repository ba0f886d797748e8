/**
 * Selecting runs for the runs list and bulk actions: the store filters what it can index (status,
 * wait reason, task, creation time); the budget status is the engine's judgement at this instant
 * (core's `timeStatusFor` with the task's thresholds), so it is applied here, page by page, and the
 * cursor stays the store's (the id of the last run looked at).
 */
import type { RunRecord } from '../store/index.ts';
import type { RunFilter } from './request-schemas.ts';
import { type RunInsight, runInsight } from './run-insight.ts';
import type { RouteContext } from './run-routes.ts';
import { type RunView, runView } from './run-views.ts';

export interface RunRow extends RunView {
  insight: RunInsight;
}

export interface Selection {
  runs: RunRecord[];
  /** Continue after this id; null when the store has no more runs matching the filter. */
  nextCursor: string | null;
}

const SCAN_PAGE = 500;

export async function selectRuns(
  rc: RouteContext,
  filter: RunFilter,
  page: { cursor?: string | undefined; limit: number },
): Promise<Selection> {
  const now = rc.clock.now();
  const query = {
    ...(filter.status !== undefined ? { status: filter.status } : {}),
    ...(filter.waitReason !== undefined ? { waitReason: filter.waitReason } : {}),
    ...(filter.name !== undefined ? { name: filter.name } : {}),
    ...(filter.createdAfter !== undefined ? { createdAfter: filter.createdAfter } : {}),
    ...(filter.createdBefore !== undefined ? { createdBefore: filter.createdBefore } : {}),
  };
  const keep = (run: RunRecord) =>
    filter.budgetStatus === undefined ||
    runInsight(rc.baton, run, now).budget?.status === filter.budgetStatus;
  const runs: RunRecord[] = [];
  let cursor = page.cursor;
  for (;;) {
    const want = filter.budgetStatus === undefined ? page.limit - runs.length : SCAN_PAGE;
    const batch = await rc.baton.listRuns({
      ...query,
      ...(cursor !== undefined ? { beforeId: cursor } : {}),
      limit: want,
    });
    for (const run of batch) {
      cursor = run.id;
      if (!keep(run)) continue;
      runs.push(run);
      if (runs.length === page.limit) return { runs, nextCursor: run.id };
    }
    if (batch.length < want) return { runs, nextCursor: null };
  }
}

export function runRow(rc: RouteContext, run: RunRecord, now: number): RunRow {
  return { ...runView(run), insight: runInsight(rc.baton, run, now) };
}
