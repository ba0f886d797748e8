/**
 * Baton on Postgres across worker processes (issue 13 item 4): runs/s of no-op runs with 1, 2 and 4
 * `worker` processes (concurrency 10 each) on one schema, and how long writers wait for the event-id
 * advisory lock that every transaction appending events holds until COMMIT.
 *
 * The runs are created first, in one write with their `run:created` events (whose hint wakes the
 * idle workers); the clock starts when they are committed and stops when the last one has
 * succeeded (polled every 20 ms). `lock_waits` samples
 * pg_locks every 20 ms during the run: the mean number of backends waiting on that advisory lock
 * (≈ 0: the lock is not what limits the rate; ≈ processes − 1: every writer queues behind it).
 * Postgres: BATON_BENCH_PG_URL, else the local test server. The machine has 2 cores: 4 processes
 * compete for CPU with Postgres, so read the scaling together with the load average printed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { newEvent } from '../src/core/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { LOCK_EVENTS } from '../src/store/postgres/sql.ts';
import { BENCH_LOADER } from './_compile.ts';
import { round } from './_stats.ts';

const BASE_URL = process.env.BATON_BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
const RUNS = 4_000;
const CONCURRENCY = 10;

async function startWorker(url: string) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      BENCH_LOADER,
      join(import.meta.dirname, '_pg-workers', 'worker.ts'),
      url,
      String(CONCURRENCY),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += String(d);
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`bench worker exited (${code}) before it was ready`)));
  });
  return child;
}

async function measure(processes: number): Promise<{ perSecond: number; lockWaits: number }> {
  const schema = `bench_w_${randomBytes(4).toString('hex')}`;
  const url = new URL(BASE_URL);
  url.searchParams.set('schema', schema);
  const store = await openPostgresStore({ connectionString: url.toString() });
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  const workers = [];
  try {
    for (let i = 0; i < processes; i++) workers.push(await startWorker(url.toString()));
    const ids = Array.from({ length: RUNS }, (_, i) => `r${i}`);
    await store.createRuns(
      ids.map((id) => ({
        id,
        kind: 'task' as const,
        name: 'bench.noop',
        input: {},
        status: 'queued' as const,
      })),
      // As start() writes them: the commit's `work` hint wakes the idle workers. Without events none
      // was sent, and they found the runs only at their next safety poll (up to 5 s, timed here).
      ids.map((id) => newEvent(id, 'run:created', { name: 'bench.noop', kind: 'task' })),
    );
    const t0 = performance.now();
    let waits = 0;
    let samples = 0;
    for (;;) {
      const [row] = (
        await admin.query(
          `SELECT (SELECT count(*) FROM ${pg.escapeIdentifier(schema)}.runs WHERE status = 'succeeded')::int AS done,
                  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1::bigint::oid)::int AS waiting`,
          [LOCK_EVENTS],
        )
      ).rows as Array<{ done: number; waiting: number }>;
      waits += row?.waiting ?? 0;
      samples++;
      if ((row?.done ?? 0) >= RUNS) break;
      if (performance.now() - t0 > 120_000) throw new Error(`only ${row?.done} of ${RUNS} runs in 120 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - t0) / 1_000;
    return { perSecond: RUNS / seconds, lockWaits: waits / samples };
  } finally {
    for (const w of workers) w.kill('SIGKILL');
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`).catch(() => {});
    await admin.end();
  }
}

export default async function bench(): Promise<Array<{ metric: string; value: number; unit: string }>> {
  const out: Array<{ metric: string; value: number; unit: string }> = [];
  const rates = new Map<number, number>();
  for (const n of [1, 2, 4]) {
    const r = await measure(n);
    rates.set(n, r.perSecond);
    out.push({ metric: `pg_workers.runs_per_s_${n}p`, value: round(r.perSecond), unit: 'runs/s' });
    out.push({ metric: `pg_workers.event_lock_waiters_${n}p`, value: round(r.lockWaits), unit: 'backends' });
  }
  out.push({
    metric: 'pg_workers.scaling_4p_over_1p',
    value: round((rates.get(4) ?? 0) / (rates.get(1) ?? 1)),
    unit: '×',
  });
  return out;
}
