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
 * - pg_idle_queries_per_s: statements a process with a started worker and nothing to do sends to
 *   the server per second (pg_stat_statements is not assumed: counted from the server's
 *   xact_commit + xact_rollback of the process's database over 10 s, one process at a time).
 *
 * Postgres: BATON_BENCH_PG_URL, else the local test server; each system gets a fresh database.
 */
import { randomBytes } from 'node:crypto';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { createBaton, defineTask } from '../src/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';

const BASE_URL = process.env.BATON_BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const JOBS = 5_000;
const CONCURRENCY = 10;
const IDLE_MS = 10_000;

interface PeerFigure {
  peer: string;
  metric: string;
  value: number;
}

async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
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

/** Transactions the database saw while `ms` passed (every statement outside BEGIN is one). */
async function transactionsDuring(url: string, ms: number): Promise<number> {
  const read = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query('SELECT pg_stat_clear_snapshot()');
      const r = await c.query(
        'SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = current_database()',
      );
      return Number(r.rows[0]?.n ?? 0);
    } finally {
      await c.end();
    }
  };
  const before = await read();
  await new Promise((r) => setTimeout(r, ms));
  // Each read is one connection with two statements of its own (stats lag ~0.5 s behind).
  await new Promise((r) => setTimeout(r, 600));
  return Math.max(0, (await read()) - before - 3);
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
    const idle = await transactionsDuring(url, IDLE_MS);
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
    const idle = await transactionsDuring(url, IDLE_MS);
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
  const quiet = new Logger(() => () => {});
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
    const idle = await transactionsDuring(url, IDLE_MS);
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
  for (const system of [baton, pgBoss, graphile])
    try {
      out.push(...(await withDatabase(system)));
    } catch (err) {
      // A peer that cannot finish is reported, not allowed to sink the others' figures.
      console.warn(`bench/_pg-peers: ${system.name}: ${(err as Error).message}`);
    }
  return out;
}
