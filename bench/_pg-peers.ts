/**
 * Postgres peers for bench/peers.ts (issue 13 item 7): Baton on Postgres beside pg-boss and
 * graphile-worker on the same server, in the same run. `pgPeers()` returns figures under
 * `pg_`-prefixed names, so bench/_peer-table.ts sets Baton-on-Postgres (system `baton`) beside the
 * best Postgres peer for each, apart from the SQLite figures.
 *
 * - pg_throughput_c10_per_s: 5,000 no-op jobs on one process at concurrency 10, from the first
 *   enqueue to the last completion (each system's fastest documented way to enqueue: Baton's
 *   start() calls sharing commits, pg-boss's bulk insert() and ten batch-fetching (100) subscriptions, graphile-worker's
 *   addJob in 20 lanes with concurrency 10).
 * - pg_idle_queries_per_s: round trips a process with a started worker and nothing to do sends to
 *   the server per second, over 10 s (counted in the process: every query node-postgres sends, all
 *   three systems use the same `pg` module; the server's transaction counters also counted
 *   autovacuum's and other sessions' work).
 * - Latency figures (due at once, enqueue → start across processes, claim with 0 and 100,000
 *   queued): bench/_pg-peers-latency.ts.
 *
 * BullMQ's Postgres backend: none is published on the npm registry (bullmq 6.7.0, its newest,
 * describes itself as "based on Redis"), so there is nothing to run beside these.
 * Postgres: BATON_BENCH_PG_URL, else the local test server; each system gets a fresh database.
 */
import { randomBytes } from 'node:crypto';
import { makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { createBaton, defineTask } from '../src/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { batonLatency, graphileLatency, type PeerFigure, pgBossLatency, quiet } from './_pg-peers-latency.ts';

const BASE_URL = process.env.BATON_BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const JOBS = 5_000;
const CONCURRENCY = 10;
const IDLE_MS = 10_000;

/** Runs `fn` on a fresh database of the server (dropped after). */
export async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `bench_pg_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

/** Queries this process sent while `ms` passed (node-postgres's Client.query, which every system here uses). */
async function queriesDuring(ms: number): Promise<number> {
  const query = pg.Client.prototype.query;
  let sent = 0;
  // biome-ignore lint/suspicious/noExplicitAny: forwards node-postgres's overloads unchanged.
  pg.Client.prototype.query = function (this: pg.Client, ...args: any[]) {
    sent++;
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (query as any).apply(this, args);
  } as typeof query;
  try {
    await new Promise((r) => setTimeout(r, ms));
    return sent;
  } finally {
    pg.Client.prototype.query = query;
  }
}

async function untilCount(get: () => number, target: number, what: string): Promise<void> {
  const t0 = performance.now();
  while (get() < target) {
    if (performance.now() - t0 > 90_000) throw new Error(`${what}: ${get()} of ${target} in 90 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function baton(url: string): Promise<PeerFigure[]> {
  const store = await openPostgresStore({ connectionString: url });
  const task = defineTask({ name: 'bench.noop', retry: false, run: () => 'ok' });
  const b = createBaton({ store, tasks: [task], worker: { concurrency: CONCURRENCY } });
  try {
    await b.ready();
    const idle = await queriesDuring(IDLE_MS);
    let done = 0;
    const off = store.onEvents((events) => {
      for (const e of events) if (e.type === 'run:succeeded') done++;
    });
    const t0 = performance.now();
    for (let i = 0; i < JOBS; i += 500)
      await Promise.all(
        Array.from({ length: Math.min(500, JOBS - i) }, (_, k) => b.start(task, { i: i + k })),
      );
    await untilCount(() => done, JOBS, 'baton');
    const perSecond = JOBS / ((performance.now() - t0) / 1_000);
    off();
    return [
      { peer: 'baton', metric: 'pg_throughput_c10_per_s', value: perSecond },
      { peer: 'baton', metric: 'pg_idle_queries_per_s', value: idle / (IDLE_MS / 1_000) },
    ];
  } finally {
    await b.close();
    await store.close();
  }
}

async function pgBoss(url: string): Promise<PeerFigure[]> {
  const boss = new PgBoss({ connectionString: url });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.createQueue('noop');
    let done = 0;
    // Concurrency 10 as v9's teamSize was: ten subscriptions, each fetching a batch (its fastest
    // documented mode); one subscription with batchSize 10 waits a polling interval between batches.
    for (let w = 0; w < CONCURRENCY; w++)
      await boss.work('noop', { batchSize: 100, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        done += jobs.length;
      });
    const idle = await queriesDuring(IDLE_MS);
    const t0 = performance.now();
    for (let i = 0; i < JOBS; i += 1_000)
      await boss.insert(
        Array.from({ length: Math.min(1_000, JOBS - i) }, (_, k) => ({ name: 'noop', data: { i: i + k } })),
      );
    await untilCount(() => done, JOBS, 'pg-boss');
    const perSecond = JOBS / ((performance.now() - t0) / 1_000);
    return [
      { peer: 'pgboss', metric: 'pg_throughput_c10_per_s', value: perSecond },
      { peer: 'pgboss', metric: 'pg_idle_queries_per_s', value: idle / (IDLE_MS / 1_000) },
    ];
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

async function graphile(url: string): Promise<PeerFigure[]> {
  let done = 0;
  // Our own pool: its errors are handled, and it is ended before the database is dropped.
  const pgPool = new pg.Pool({ connectionString: url, max: CONCURRENCY + 2 });
  pgPool.on('error', () => {});
  const runner = await run({
    pgPool,
    concurrency: CONCURRENCY,
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: quiet,
    taskList: {
      noop: async () => {
        done++;
      },
    },
  });
  const utils = await makeWorkerUtils({ pgPool, logger: quiet });
  try {
    const idle = await queriesDuring(IDLE_MS);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < JOBS) {
          const i = next++;
          await utils.addJob('noop', { i });
        }
      }),
    );
    await untilCount(() => done, JOBS, 'graphile-worker');
    const perSecond = JOBS / ((performance.now() - t0) / 1_000);
    return [
      { peer: 'graphile_worker', metric: 'pg_throughput_c10_per_s', value: perSecond },
      { peer: 'graphile_worker', metric: 'pg_idle_queries_per_s', value: idle / (IDLE_MS / 1_000) },
    ];
  } finally {
    await utils.release();
    await runner.stop();
    await pgPool.end();
  }
}

export async function pgPeers(): Promise<PeerFigure[]> {
  const out: PeerFigure[] = [];
  for (const system of [baton, pgBoss, graphile, batonLatency, pgBossLatency, graphileLatency])
    try {
      out.push(...(await withDatabase(system)));
    } catch (err) {
      // A peer that cannot finish is reported, not allowed to sink the others' figures.
      console.warn(`bench/_pg-peers: ${system.name}: ${(err as Error).message}`);
    }
  return out;
}
