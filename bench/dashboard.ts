/**
 * The dashboard in Chromium (Debian's, driven by playwright-core) over a SQLite file holding 10,000
 * runs (mixed statuses, budgets, some waiting for decisions) and one run of 2,000 events.
 *
 * - dashboard.<page>_ms: from `page.goto` to the page showing its data (a fresh browser context
 *   each time, so nothing is cached), median of BENCH_DASHBOARD_SAMPLES (default 7) loads. Pages:
 *   overview, runs (the first page of the 10,000), run (the 2,000-event run: header, timeline,
 *   events), decisions, run_phone (the run page at 390 px). Target: under 1 s.
 * - dashboard.<page>_floor_ms: the floor measured in the same run — the same browser loading a blank
 *   page from the same server and fetching the page's API answer itself (JSON.parse, no rendering):
 *   what any page needs at least. The ratio is the cost of the dashboard itself.
 * - dashboard.bundle_kb / bundle_gzip_kb: the JavaScript shipped.
 *
 * Without /usr/bin/chromium it throws (apt-get install -y chromium).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Page } from 'playwright-core';
import { type NewEvent, newEvent } from '../src/core/index.ts';
import { serveHttp } from '../src/http/index.ts';
import { createBaton } from '../src/runtime/index.ts';
import { type NewRun, openSqliteStore } from '../src/store/index.ts';
import { ManualClock } from '../src/time/index.ts';
import { type BenchMetric, median, round, withTempDir } from './_stats.ts';

const CHROMIUM = '/usr/bin/chromium';
const RUNS = Number(process.env.BENCH_DASHBOARD_RUNS ?? 10_000);
const EVENTS = Number(process.env.BENCH_DASHBOARD_EVENTS ?? 2_000);
const SAMPLES = Number(process.env.BENCH_DASHBOARD_SAMPLES ?? 7);

export const peers = [
  'Temporal Web UI, Inngest dev server, Trigger.dev: not measured here (each needs its own server stack);',
  'the floor is the same browser fetching the same API answer without rendering it.',
];

/** 10,000 runs in batches, the big run, all through the Store interface on a manual clock. */
async function seed(db: string): Promise<{ bigRun: string }> {
  const start = Date.now() - 3_600_000;
  const clock = new ManualClock(start);
  const store = openSqliteStore(db, { clock });
  const names = ['researcher', 'summarizer', 'image_draw', 'aggregator'];
  for (let b = 0; b < RUNS; b += 500) {
    const runs: NewRun[] = [];
    const events: NewEvent[] = [];
    for (let i = b; i < Math.min(RUNS, b + 500); i++) {
      const id = `run_bench_${String(i).padStart(6, '0')}`;
      runs.push({
        id,
        kind: 'task',
        name: names[i % names.length] as string,
        input: { i },
        status: 'queued',
        budgetMs: 1_200_000,
      });
      events.push(newEvent(id, 'run:created', { name: names[i % names.length] as string, kind: 'task' }));
    }
    await store.createRuns(runs, events);
    await clock.advance(300);
  }
  // Most end (succeeded, failed, partial), some keep running with their budgets ticking.
  const claimed = await store.claimRuns({ owner: 'bench', leaseMs: 3_600_000, limit: RUNS, names });
  const ends = claimed.slice(0, Math.floor(RUNS * 0.9));
  for (let b = 0; b < ends.length; b += 500) {
    await store.transitionAll(
      ends.slice(b, b + 500).map((r, j) => {
        const status = j % 10 === 0 ? 'failed' : j % 7 === 0 ? 'partial' : 'succeeded';
        return {
          runId: r.id,
          patch: {
            status,
            finishedAt: clock.now(),
            releaseLease: true,
            ...(status === 'failed'
              ? { error: { name: 'Error', message: 'upstream 503', code: 'TASK_FAILED' } }
              : {}),
          },
          events: [
            status === 'failed'
              ? newEvent(r.id, 'run:failed', {
                  error: { name: 'Error', message: 'upstream 503', code: 'TASK_FAILED' },
                })
              : newEvent(r.id, status === 'partial' ? 'run:partial' : 'run:succeeded', { durationMs: 1_000 }),
          ],
        };
      }),
    );
  }
  // The big run: three attempts with growing timeouts, 2,000 events of steps, checkpoints, partials.
  const bigRun = 'run_bench_big';
  await store.createRuns(
    [{ id: bigRun, kind: 'task', name: 'researcher', input: {}, status: 'queued', budgetMs: 3_600_000 }],
    [newEvent(bigRun, 'run:created', { name: 'researcher', kind: 'task' })],
  );
  const [big] = await store.claimRuns({
    owner: 'bench-big',
    leaseMs: 3_600_000,
    limit: 1,
    names: ['researcher'],
    ids: [bigRun],
  });
  if (!big) throw new Error('could not claim the big run');
  const fence = { runId: bigRun, token: big.leaseToken };
  let written = 1;
  let attempt = 1;
  let seq = 0;
  const batch: NewEvent[] = [];
  const flush = async () => {
    await store.appendEvents(batch.splice(0), fence);
    await clock.advance(700);
  };
  batch.push(newEvent(bigRun, 'attempt:started', { attempt, owner: 'bench-big', timeoutMs: 600_000 }));
  while (written < EVENTS - 1) {
    const n = written;
    if (n % 700 === 0) {
      batch.push(
        newEvent(bigRun, 'attempt:timed_out', { attempt, timeoutMs: 600_000 * attempt, findings: 3 }),
      );
      batch.push(
        newEvent(bigRun, 'attempt:retrying', {
          attempt,
          nextAttempt: attempt + 1,
          waitMs: 5_000,
          nextTimeoutMs: 600_000 * (attempt + 1),
        }),
      );
      attempt++;
      batch.push(
        newEvent(bigRun, 'attempt:started', { attempt, owner: 'bench-big', timeoutMs: 600_000 * attempt }),
      );
      written += 3;
    } else if (n % 10 === 0) {
      seq++;
      batch.push(
        newEvent(bigRun, 'checkpoint:saved', {
          seq,
          itemsAnalyzed: seq,
          progressPercentage: Math.min(100, seq / 2),
          remainingSeconds: 1800,
        }),
      );
      written++;
    } else if (n % 5 === 0) {
      batch.push(newEvent(bigRun, 'partial:recorded', { count: 1, total: n / 5 }));
      written++;
    } else {
      batch.push(newEvent(bigRun, 'step:completed', { key: `item-${n}`, durationMs: 400 }));
      written++;
    }
    if (batch.length >= 25) await flush();
  }
  if (batch.length) await flush();
  await store.close();
  return { bigRun };
}

/** Milliseconds from navigation to `ready` in a fresh context (cold cache). */
async function load(
  browser: import('playwright-core').Browser,
  url: string,
  ready: string,
  width = 1280,
): Promise<number> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const t0 = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator(ready).first().waitFor({ timeout: 30_000 });
  const ms = performance.now() - t0;
  await context.close();
  return ms;
}

/** The floor: a blank page from the same server that fetches and parses the same API answer. */
async function floor(browser: import('playwright-core').Browser, base: string, api: string): Promise<number> {
  const context = await browser.newContext();
  const page: Page = await context.newPage();
  const t0 = performance.now();
  await page.goto(`${base}/health`, { waitUntil: 'commit' });
  await page.evaluate(async (path) => {
    const r = await fetch(path);
    JSON.parse(await r.text());
  }, api);
  const ms = performance.now() - t0;
  await context.close();
  return ms;
}

export default async function bench(): Promise<BenchMetric[]> {
  if (!existsSync(CHROMIUM))
    throw new Error(`dashboard bench needs ${CHROMIUM}: apt-get install -y chromium`);
  return withTempDir('dashboard', async (dir) => {
    const db = join(dir, 'baton.db');
    const { bigRun } = await seed(db);
    const baton = createBaton({ store: db, worker: false });
    const server = await serveHttp(baton, { dashboard: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    const out: BenchMetric[] = [];
    try {
      const pages: Array<[string, string, string, string, number?]> = [
        ['overview', '/dashboard/', 'ul.counts', '/overview'],
        ['runs', '/dashboard/runs', 'table.runs tbody tr', '/runs?limit=50'],
        ['run', `/dashboard/runs/${bigRun}`, '.timeline svg .checkpoint', `/runs/${bigRun}/timeline`],
        [
          'run_phone',
          `/dashboard/runs/${bigRun}`,
          '.timeline svg .checkpoint',
          `/runs/${bigRun}/timeline`,
          390,
        ],
        ['deliveries', '/dashboard/deliveries', 'main h1 + nav', '/deliveries'],
      ];
      // One warm-up load: the first Chromium page pays for its own start-up, not the dashboard's.
      await load(browser, `${server.url}/dashboard/`, 'ul.counts');
      for (const [name, path, ready, api, width] of pages) {
        const times: number[] = [];
        const floors: number[] = [];
        for (let i = 0; i < SAMPLES; i++) {
          times.push(await load(browser, server.url + path, ready, width));
          floors.push(await floor(browser, server.url, server.url + api));
        }
        out.push({ metric: `dashboard.${name}_ms`, value: round(median(times)), unit: 'ms' });
        out.push({ metric: `dashboard.${name}_floor_ms`, value: round(median(floors)), unit: 'ms' });
      }
      const js = readFileSync(join(import.meta.dirname, '..', 'dist', 'dashboard', 'static', 'app.js'));
      out.push({ metric: 'dashboard.bundle_kb', value: round(js.length / 1024), unit: 'kB' });
      out.push({ metric: 'dashboard.bundle_gzip_kb', value: round(gzipSync(js).length / 1024), unit: 'kB' });
      const timeline = (await (await fetch(`${server.url}/runs/${bigRun}/timeline`)).json()) as {
        events: unknown[];
      };
      out.push({ metric: 'dashboard.run_events', value: timeline.events.length, unit: 'events' });
      out.push({ metric: 'dashboard.runs_in_store', value: RUNS + 1, unit: 'runs' });
    } finally {
      await browser.close();
      await server.close();
      await baton.close();
    }
    return out;
  });
}
