/**
 * `GET /overview`: the operator's first screen in one request — runs by status, runs at risk
 * (warning / time_critical), the next deliveries and decision timeouts, recent failures, workers
 * with their leases and heartbeats, and the store's health.
 */
import { type DeliveryEntry, decisionInbox, deliveryBoard, type InboxDecision } from '../runtime/index.ts';
import type { WorkerRecord } from '../store/index.ts';
import type { RouteContext } from './run-routes.ts';
import { type RunRow, runRow, selectRuns } from './run-selection.ts';
import { jsonResponse } from './wire-errors.ts';

const SHOWN = 10;

export interface Overview {
  success: true;
  now: number;
  /** Runs (flows and tasks, steps included) per status. */
  counts: Record<string, number>;
  /** Running runs in time_critical, then in warning. */
  atRisk: RunRow[];
  nextDeliveries: DeliveryEntry[];
  nextDecisionTimeouts: InboxDecision[];
  openDecisions: number;
  recentFailures: RunRow[];
  workers: Array<WorkerRecord & { leases: Array<{ runId: string; leaseExpiresAt: number | null }> }>;
  store: { dialect: string; ok: boolean; answeredInMs: number };
}

export async function overviewRoute(rc: RouteContext): Promise<Response> {
  const { baton } = rc;
  const now = rc.clock.now();
  const started = rc.clock.monotonic();
  const [counts, workers, running, critical, warning, failed, deliveries, decisions] = await Promise.all([
    baton.store.countRuns(),
    baton.store.listWorkers(),
    baton.store.listRuns({ status: 'running', topLevel: false, limit: 10_000 }),
    selectRuns(rc, { status: 'running', budgetStatus: 'time_critical' }, { limit: SHOWN }),
    selectRuns(rc, { status: 'running', budgetStatus: 'warning' }, { limit: SHOWN }),
    selectRuns(rc, { status: 'failed' }, { limit: SHOWN }),
    deliveryBoard(baton.internals, { state: 'upcoming', limit: SHOWN }),
    decisionInbox(baton.internals, 1_000),
  ]);
  const held = new Map<string, Array<{ runId: string; leaseExpiresAt: number | null }>>();
  for (const r of running)
    if (r.leaseOwner !== null)
      held.set(r.leaseOwner, [
        ...(held.get(r.leaseOwner) ?? []),
        { runId: r.id, leaseExpiresAt: r.leaseExpiresAt },
      ]);
  const body: Overview = {
    success: true,
    now,
    counts,
    atRisk: [...critical.runs, ...warning.runs].map((r) => runRow(rc, r, now)),
    nextDeliveries: deliveries.deliveries,
    nextDecisionTimeouts: decisions.filter((d) => d.timeoutAt !== null).slice(0, SHOWN),
    openDecisions: decisions.length,
    recentFailures: failed.runs.map((r) => runRow(rc, r, now)),
    workers: workers.map((w) => ({ ...w, leases: held.get(w.id) ?? [] })),
    store: {
      dialect: baton.store.dialect,
      ok: true,
      answeredInMs: rc.clock.monotonic() - started,
    },
  };
  return jsonResponse(body);
}
