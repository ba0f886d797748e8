/**
 * `POST /bulk/cancel` and `POST /bulk/resume`: the runs named by `ids` or selected by `filter` (the
 * runs list's filters). `dryRun: true` only counts what would be touched, so a person confirms
 * "cancel 37 runs" before anything changes. Each run is changed in its own transaction; one that
 * changed meanwhile (finished, resumed elsewhere) is reported as skipped with the reason.
 */
import { BatonError, isBatonError, isTerminal, type RunStatus } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { BulkBody } from './request-schemas.ts';
import type { RouteContext } from './run-routes.ts';
import { selectRuns } from './run-selection.ts';
import { jsonResponse } from './wire-errors.ts';

/** The most runs one request touches; narrow the filter for more. */
export const BULK_LIMIT = 10_000;

export interface BulkAnswer {
  success: true;
  action: 'cancel' | 'resume';
  dryRun: boolean;
  /** Runs named or selected. */
  matched: number;
  /** Runs the action applies to (the others already ended, or are not resumable). */
  eligible: number;
  /** More runs match than one request touches (BULK_LIMIT): narrow the filter. */
  capped: boolean;
  notFound: string[];
  /** Dry run: the first eligible ids. */
  sample?: string[];
  /** Runs changed. */
  done?: number;
  /** Runs that changed meanwhile and were left alone, with the reason. */
  skipped?: Array<{ id: string; error: string; message: string }>;
}

const RESUMABLE: ReadonlySet<RunStatus> = new Set(['failed', 'partial', 'cancelled']);

const eligible = {
  cancel: (run: RunRecord) => !isTerminal(run.status),
  resume: (run: RunRecord) => RESUMABLE.has(run.status) || run.waitReason === 'resume',
} as const;

interface Targets {
  runs: RunRecord[];
  capped: boolean;
  /** Ids given that name no run. */
  notFound: string[];
}

async function targets(rc: RouteContext, body: BulkBody): Promise<Targets> {
  if ((body.ids === undefined) === (body.filter === undefined))
    throw new BatonError('INVALID_INPUT', 'body must give exactly one of ids or filter', {
      data: { field: body.ids === undefined ? 'body.filter' : 'body.ids' },
    });
  if (body.ids) {
    const ids = [...new Set(body.ids)];
    const runs = await Promise.all(ids.map((id) => rc.baton.getRun(id)));
    return {
      runs: runs.filter((r): r is RunRecord => r !== undefined),
      capped: false,
      notFound: ids.filter((_, i) => runs[i] === undefined),
    };
  }
  const { createdAfter, createdBefore, ...rest } = body.filter ?? {};
  const instant = (v: number | string | undefined) => (typeof v === 'string' ? Date.parse(v) : v);
  const after = instant(createdAfter);
  const before = instant(createdBefore);
  const { runs, nextCursor } = await selectRuns(
    rc,
    {
      ...rest,
      ...(after !== undefined ? { createdAfter: after } : {}),
      ...(before !== undefined ? { createdBefore: before } : {}),
    },
    { limit: BULK_LIMIT },
  );
  return { runs, capped: nextCursor !== null, notFound: [] };
}

export async function bulkRoute(
  rc: RouteContext,
  body: BulkBody,
  action: 'cancel' | 'resume',
): Promise<Response> {
  const { runs, capped, notFound } = await targets(rc, body);
  const chosen = runs.filter(eligible[action]);
  const summary: BulkAnswer = {
    success: true,
    action,
    dryRun: body.dryRun === true,
    matched: runs.length,
    eligible: chosen.length,
    capped,
    notFound,
  };
  if (body.dryRun) return jsonResponse({ ...summary, sample: chosen.slice(0, 20).map((r) => r.id) });
  const reason =
    body.reason ?? `${action === 'cancel' ? 'cancelled' : 'resumed'} in bulk by ${rc.options.actor}`;
  const outcomes = await Promise.all(
    chosen.map(async (run) => {
      try {
        if (action === 'cancel') await rc.baton.cancel(run.id, reason);
        else await rc.baton.resume(run.id, rc.options.actor);
        return { id: run.id, ok: true as const };
      } catch (err) {
        if (!isBatonError(err)) throw err;
        return { id: run.id, ok: false as const, error: err.code, message: err.message };
      }
    }),
  );
  const skipped = outcomes.flatMap((o) => (o.ok ? [] : [{ id: o.id, error: o.error, message: o.message }]));
  return jsonResponse({ ...summary, done: outcomes.length - skipped.length, skipped });
}
