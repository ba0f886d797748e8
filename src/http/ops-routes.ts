/**
 * `GET /health` (open even with a token: load balancers probe it) and `GET /metrics` (Prometheus
 * text exposition). Health says whether the store answers, which workers are registered, and how
 * many runs are in each status, and what the store warns about (Postgres: autovacuum off, a long
 * transaction pinning the vacuum horizon, clock skew, LISTEN down); it never includes run data.
 */
import { RunStatuses } from '../core/index.ts';
import type { StoreWarning } from '../store/index.ts';
import type { RouteContext } from './run-routes.ts';
import { jsonResponse } from './wire-errors.ts';

/** `GET /health`. */
export interface Health {
  ok: boolean;
  store: { dialect: string; ok: boolean; error?: string; warnings?: StoreWarning[] };
  workers: { registered: number | null; here: { id: string; running: number } | null };
  runs: Record<string, number> | null;
}

export async function healthRoute(rc: RouteContext): Promise<Response> {
  const { baton } = rc;
  const worker = baton.worker ? { id: baton.worker.id, running: baton.worker.running } : null;
  try {
    const [counts, workers, health] = await Promise.all([
      baton.store.countRuns(),
      baton.store.listWorkers(),
      // Warnings are advice: the store answering is what makes the process healthy.
      baton.store.health?.().catch(() => undefined),
    ]);
    const runs = Object.fromEntries(RunStatuses.map((s) => [s, counts[s] ?? 0]));
    return health_({
      ok: true,
      store: {
        dialect: baton.store.dialect,
        ok: true,
        ...(health ? { warnings: health.warnings } : {}),
      },
      workers: { registered: workers.length, here: worker },
      runs,
    });
  } catch (err) {
    return health_(
      {
        ok: false,
        store: { dialect: baton.store.dialect, ok: false, error: (err as Error).message },
        workers: { registered: null, here: worker },
        runs: null,
      },
      503,
    );
  }
}

function health_(body: Health, status = 200): Response {
  return jsonResponse(body, status);
}

export async function metricsRoute(rc: RouteContext): Promise<Response> {
  const text = await rc.metrics.registry.render();
  return new Response(text, {
    status: 200,
    headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
  });
}
