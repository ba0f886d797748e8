/**
 * Baton's metrics: runs by status, checkpoint save/load time, resume outcomes and overhead, history
 * compression, HTTP requests. Fed by the store's committed events (`store.onEvents`, this process
 * only) and, for exact checkpoint timings, by `measureStore`, which times the store calls
 * themselves. Events that carry `durationMs` (a field the engine may add to `checkpoint:saved` /
 * `checkpoint:loaded`) are used when the store is not measured.
 */
import { type BatonEvent, RunStatuses } from '../core/index.ts';
import type { Store } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import { type Counter, type Gauge, type Histogram, MetricsRegistry } from './metrics-registry.ts';

const ENDINGS: Readonly<Record<string, string>> = {
  'run:succeeded': 'succeeded',
  'run:partial': 'partial',
  'run:failed': 'failed',
  'run:cancelled': 'cancelled',
  'run:expired': 'expired',
};

const RATIO_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];

export interface BatonMetrics {
  readonly registry: MetricsRegistry;
  readonly checkpointSaveMs: Histogram;
  readonly checkpointLoadMs: Histogram;
  /** Resume request's arrival (or the resume's commit, for other clients) → the resumed attempt's start. */
  readonly resumeOverheadMs: Histogram;
  readonly resumes: Counter;
  readonly resumeOutcomes: Counter;
  readonly compressionRatio: Histogram;
  readonly httpRequests: Counter;
  /** Records committed events (the handler subscribes this to the store). */
  observe(events: readonly BatonEvent[]): void;
  /** Marks the arrival of a resume request for `runId` (monotonic ms), for the overhead histogram. */
  resumeArrived(runId: string, atMono: number): void;
  /** Reports runs by status and workers from this store at every scrape. */
  collectFrom(store: Store): void;
  /** Set by measureStore: checkpoint timings then come from the store calls, not from events. */
  storeMeasured: boolean;
}

export function createBatonMetrics(clock: Clock, registry = new MetricsRegistry()): BatonMetrics {
  const runs = registry.gauge('baton_runs', 'Runs by status (all runs in the store).');
  const workers = registry.gauge('baton_workers', 'Workers registered in the store.');
  const storeWarnings = registry.gauge(
    'baton_store_warning',
    'A warning about the database the store reports (1 per warning code; see GET /health).',
  );
  // The store's own figures (Postgres: autovacuum, oldest transaction, clock skew, table sizes),
  // registered the first time the store reports each.
  const healthGauges = new Map<string, Gauge>();
  const healthGauge = (name: string, help: string): Gauge => {
    let g = healthGauges.get(name);
    if (!g) {
      g = registry.gauge(name, help);
      healthGauges.set(name, g);
    }
    return g;
  };
  const checkpointSaveMs = registry.histogram(
    'baton_checkpoint_save_ms',
    'Time to save a checkpoint, in ms.',
  );
  const checkpointLoadMs = registry.histogram(
    'baton_checkpoint_load_ms',
    'Time to load the last checkpoint, in ms.',
  );
  const resumeOverheadMs = registry.histogram(
    'baton_resume_overhead_ms',
    "Time from a resume request's arrival to the resumed attempt's start (checkpoint loaded), in ms.",
  );
  const resumes = registry.counter('baton_resumes_total', 'Runs resumed (by any client of this process).');
  const resumeOutcomes = registry.counter(
    'baton_resume_outcomes_total',
    'How resumed invocations ended: succeeded, partial, failed, cancelled, expired, or waiting (parked again).',
  );
  const successRatio = registry.gauge(
    'baton_resume_success_ratio',
    'Resumes that ended succeeded / resumes (NaN before the first resume).',
  );
  const compressionRatio = registry.histogram(
    'baton_history_compression_ratio',
    'Conversation size after / before history compression (agent checkpoints).',
    RATIO_BUCKETS,
  );
  const httpRequests = registry.counter(
    'baton_http_requests_total',
    'HTTP requests by method, route and status.',
  );
  const collected = new WeakSet<Store>();
  const pendingResumes = new Set<string>();
  // Resumed runs whose next attempt has not started: when the resume was seen, and when its HTTP
  // request arrived (if it came through HTTP). Both are dropped when the attempt starts.
  const awaitingStart = new Map<string, number>();
  const arrivals = new Map<string, number>();
  registry.collect(() => {
    const total = resumes.get();
    successRatio.set(total === 0 ? Number.NaN : resumeOutcomes.get({ outcome: 'succeeded' }) / total);
  });

  const metrics: BatonMetrics = {
    registry,
    checkpointSaveMs,
    checkpointLoadMs,
    resumeOverheadMs,
    resumes,
    resumeOutcomes,
    compressionRatio,
    httpRequests,
    storeMeasured: false,
    observe(events) {
      for (const e of events) observeOne(e);
    },
    resumeArrived(runId, atMono) {
      // Only while its attempt has not started yet, so a late call cannot pair with a later attempt.
      if (awaitingStart.has(runId)) arrivals.set(runId, atMono);
    },
    collectFrom(store) {
      // Handlers sharing these metrics on one store report its runs once.
      if (collected.has(store)) return;
      collected.add(store);
      registry.collect(async () => {
        const counts = await store.countRuns();
        runs.reset();
        for (const s of RunStatuses) runs.set(counts[s] ?? 0, { status: s });
        workers.set((await store.listWorkers()).length);
        if (store.health) {
          // A scrape must not fail because a health figure could not be read: the runs above stand.
          const health = await store.health().catch(() => undefined);
          storeWarnings.reset();
          for (const w of health?.warnings ?? []) storeWarnings.set(1, { code: w.code });
          for (const g of health?.gauges ?? []) healthGauge(g.name, g.help).reset();
          for (const g of health?.gauges ?? []) healthGauge(g.name, g.help).set(g.value, g.labels);
        }
      });
    },
  };

  function observeOne(e: BatonEvent): void {
    const data = e.data as unknown as Record<string, unknown>;
    if (e.type === 'run:resumed') {
      resumes.inc();
      pendingResumes.add(e.runId);
      awaitingStart.set(e.runId, clock.monotonic());
      // Bounded: resumed runs that never start (a worker elsewhere takes them) must not leak.
      if (awaitingStart.size > 10_000) awaitingStart.delete(awaitingStart.keys().next().value as string);
      return;
    }
    if (e.type === 'attempt:started') {
      const seen = awaitingStart.get(e.runId);
      if (seen !== undefined) {
        resumeOverheadMs.observe(clock.monotonic() - (arrivals.get(e.runId) ?? seen));
        awaitingStart.delete(e.runId);
        arrivals.delete(e.runId);
      }
      return;
    }
    if (e.type === 'checkpoint:saved' && !metrics.storeMeasured && typeof data.durationMs === 'number')
      checkpointSaveMs.observe(data.durationMs);
    else if (e.type === 'checkpoint:loaded' && !metrics.storeMeasured && typeof data.durationMs === 'number')
      checkpointLoadMs.observe(data.durationMs);
    else if (e.type === 'task:event' && data.kind === 'history:compressed') {
      const ratio = (data.data as Record<string, unknown> | undefined)?.sizeRatio;
      if (typeof ratio === 'number') compressionRatio.observe(ratio);
    }
    const ending = ENDINGS[e.type] ?? (e.type === 'run:waiting' && isParked(data) ? 'waiting' : undefined);
    if (ending && pendingResumes.delete(e.runId)) resumeOutcomes.inc({ outcome: ending });
  }
  return metrics;
}

function isParked(data: Record<string, unknown>): boolean {
  return data.reason === 'resume' || data.reason === 'decision';
}

type TimedMethod = 'saveCheckpoint' | 'getLastCheckpoint';

/**
 * A Store that times its checkpoint calls into `metrics` (pass it to `createBaton({ store })`).
 * Every other call goes straight through to the store.
 */
export function measureStore(store: Store, metrics: BatonMetrics, clock: Clock): Store {
  metrics.storeMeasured = true;
  const timed: Record<TimedMethod, Histogram> = {
    saveCheckpoint: metrics.checkpointSaveMs,
    getLastCheckpoint: metrics.checkpointLoadMs,
  };
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      const histogram = typeof prop === 'string' ? timed[prop as TimedMethod] : undefined;
      if (!histogram) return method.bind(target);
      return async (...args: unknown[]) => {
        const started = clock.monotonic();
        try {
          return await method.apply(target, args);
        } finally {
          histogram.observe(clock.monotonic() - started);
        }
      };
    },
  });
}

export type { Counter, Gauge, Histogram };
