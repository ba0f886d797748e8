/**
 * Latency figures of Baton on Postgres beside pg-boss and graphile-worker (issue 13 item 7), for
 * bench/_pg-peers.ts; each system on its own fresh database, the same server, the same run.
 *
 * - pg_due_at_once_p50_ms / _p99_ms: 1,000 jobs all due at one instant, with up to 1,000 in flight
 *   in each system: pg-boss's ten subscriptions fetch batches of 100 and hand each to one handler
 *   call, so Baton runs at concurrency 1,000 beside it (graphile-worker is not in this row: its
 *   concurrency is a job loop each, and 1,000 loops is no setting it documents). Lateness = the
 *   moment the body starts − the due instant (bench/_peer-due.ts).
 * - pg_due_at_once_c10_p50_ms / _p99_ms: the same with 10 jobs in flight: Baton at concurrency 10
 *   beside graphile-worker at concurrency 10. This row is bound by each system's rate of runs; it
 *   was the only one before, set against pg-boss's 1,000 in flight. pg-boss is not in it: a
 *   subscription that fetches one job waits its polling interval (0.5 s at least) between fetches.
 * - pg_enqueue_to_start_p50_ms / _p99_ms: one process enqueues 200 jobs, one every 10 ms, another
 *   process (bench/_pg-peers/consumer.ts) executes them; from the enqueue call to the body's start
 *   (both read the same machine clock).
 * - pg_claim_0_ms / pg_claim_100k_ms: one claim of one job, when it is the only one queued and when
 *   100,000 more are queued behind it (median of 200). graphile-worker has no public claim call.
 * - pg_claim_100k_sleeping_ms (Baton): one claim of the only queued job while 100,000 runs sleep on
 *   a timer for an hour (median of 200).
 *
 * Each system's fastest documented settings: pg-boss polls every 0.5 s (its minimum), in ten
 * subscriptions of batches of 100; graphile-worker listens for new jobs and polls every 100 ms for
 * jobs coming due.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Logger, makeWorkerUtils, run, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { createBaton, defineTask } from '../src/index.ts';
import { openPostgresStore, type PostgresStore } from '../src/store/postgres/index.ts';
import { BENCH_LOADER } from './_compile.ts';
import { percentile } from './_delivery-runs.ts';
import { batonDueAtOnceOn } from './_peer-baton.ts';
import { type DueAtOnce, dueSamples, withAdaptiveLead } from './_peer-due.ts';

const DUE_JOBS = 1_000;
const DUE_LEAD_MS = 3_000;
const CONCURRENCY = 10;
const SENT = 200;
const SEND_EVERY_MS = 10;
const CLAIMS = 200;
const BACKLOG = 100_000;
export const quiet = new Logger(() => () => {});

export interface PeerFigure {
  peer: string;
  metric: string;
  value: number;
}

/** The machine clock in ms with sub-ms resolution, comparable across processes. */
export function clockMs(): number {
  return performance.timeOrigin + performance.now();
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

function figures(peer: string, name: string, d: DueAtOnce): PeerFigure[] {
  return [
    { peer, metric: `pg_${name}_p50_ms`, value: d.p50 },
    { peer, metric: `pg_${name}_p99_ms`, value: d.p99 },
  ];
}

/** Starts the consumer of `system` in its own process; resolves with its latencies once it saw `count` jobs. */
async function consumer(system: string, url: string, count: number, send: () => Promise<void>) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      BENCH_LOADER,
      join(import.meta.dirname, '_pg-peers', 'consumer.ts'),
      system,
      url,
      String(count),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`${system} consumer exited (${code}) before it was ready`)),
    );
  });
  const finished = new Promise<number[]>((resolve, reject) => {
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('['));
      if (code === 0 && line) resolve(JSON.parse(line) as number[]);
      else reject(new Error(`${system} consumer exited (${code})`));
    });
  });
  try {
    await ready;
    await send();
    return dueSamples(await finished, 1);
  } finally {
    child.kill('SIGKILL');
  }
}

async function paced(send: (t: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < SENT; i++) {
    await send(clockMs());
    await new Promise((r) => setTimeout(r, SEND_EVERY_MS));
  }
}

async function timedClaims(claim: () => Promise<number>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < CLAIMS; i++) {
    const t0 = performance.now();
    const got = await claim();
    times.push(performance.now() - t0);
    if (got !== 1) throw new Error(`a claim took ${got} jobs, not 1`);
  }
  return median(times);
}

/** 1,000 runs due at once on Baton, `concurrency` (10, or 1,000 as pg-boss's ten batches of 100) in flight. */
export function batonDueAtOnce(store: PostgresStore, concurrency: number): Promise<DueAtOnce> {
  return withAdaptiveLead(DUE_LEAD_MS, (lead) => batonDueAtOnceOn(store, DUE_JOBS, lead, concurrency));
}

export async function batonLatency(url: string): Promise<PeerFigure[]> {
  const out: PeerFigure[] = [];
  const store = await openPostgresStore({ connectionString: url });
  try {
    out.push(...figures('baton', 'due_at_once', await batonDueAtOnce(store, DUE_JOBS)));
    out.push(...figures('baton', 'due_at_once_c10', await batonDueAtOnce(store, CONCURRENCY)));
    out.push(...figures('baton', 'enqueue_to_start', await batonEnqueueToStart(store, url)));
    out.push(...(await batonClaimLatency(store)));
  } finally {
    await store.close();
  }
  return out;
}

/** Enqueue → start across processes: this process enqueues on `store`, a consumer process on `url` starts. */
export async function batonEnqueueToStart(store: PostgresStore, url: string): Promise<DueAtOnce> {
  const task = defineTask({ name: 'bench.sent', retry: false, run: () => {} });
  const producer = createBaton({ store, tasks: [task], worker: false });
  try {
    return await consumer('baton', url, SENT, () => paced((t) => producer.start(task, { t })));
  } finally {
    await producer.close();
  }
}

/** graphile-worker's pool and utils on `url` for the time `work` takes, then released. */
async function withGraphile<T>(
  url: string,
  work: (pgPool: pg.Pool, utils: WorkerUtils) => Promise<T>,
): Promise<T> {
  const pgPool = new pg.Pool({ connectionString: url, max: CONCURRENCY + 2 });
  pgPool.on('error', () => {});
  try {
    const utils = await makeWorkerUtils({ pgPool, logger: quiet });
    try {
      return await work(pgPool, utils);
    } finally {
      await utils.release();
    }
  } finally {
    await pgPool.end();
  }
}

/** Enqueue → start across processes with graphile-worker (addJob here, its runner in a consumer process). */
export function graphileEnqueueToStart(url: string): Promise<DueAtOnce> {
  return withGraphile(url, (_, utils) =>
    consumer('graphile_worker', url, SENT, () => paced((t) => utils.addJob('sent', { t }))),
  );
}

/**
 * Claim latency of one run on the store: alone, with 100,000 runs asleep on a timer for an hour
 * (a claim must not step over them), and with 100,000 queued behind it.
 */
export async function batonClaimLatency(store: PostgresStore): Promise<PeerFigure[]> {
  const out: PeerFigure[] = [];
  const claimOne = async () =>
    (await store.claimRuns({ owner: 'bench', leaseMs: 60_000, limit: 1, names: ['bench.claim'] })).length;
  const queue = async (n: number, from: number, asleep = false) => {
    for (let i = 0; i < n; i += 5_000)
      await store.createRuns(
        Array.from({ length: Math.min(5_000, n - i) }, (_, k) => ({
          id: `${asleep ? 'a' : 'c'}${from + i + k}`,
          kind: 'task' as const,
          name: 'bench.claim',
          input: {},
          ...(asleep
            ? { status: 'waiting' as const, waitReason: 'timer' as const, wakeAt: Date.now() + 3_600_000 }
            : { status: 'queued' as const }),
        })),
        [],
      );
  };
  let next = 0;
  const queueOneAndClaim = async () => {
    await queue(1, next++);
    return claimOne();
  };
  out.push({ peer: 'baton', metric: 'pg_claim_0_ms', value: await timedClaims(queueOneAndClaim) });
  await queue(BACKLOG, 1_000_000);
  out.push({ peer: 'baton', metric: 'pg_claim_100k_ms', value: await timedClaims(claimOne) });
  const drain = { owner: 'bench', leaseMs: 60_000, limit: 5_000, names: ['bench.claim'] };
  while ((await store.claimRuns(drain)).length > 0);
  // Asleep ids ('a…') sort before the queued ones ('c…'), as runs that went to sleep earlier do:
  // a claim that walked every claimable run in (priority, id) order would step over all of them.
  await queue(BACKLOG, 1_000_000, true);
  out.push({
    peer: 'baton',
    metric: 'pg_claim_100k_sleeping_ms',
    value: await timedClaims(queueOneAndClaim),
  });
  return out;
}

/** 1,000 jobs due at once on pg-boss (started): ten subscriptions fetching batches of 100. */
async function pgBossDue(boss: PgBoss): Promise<DueAtOnce> {
  await boss.createQueue('due');
  return withAdaptiveLead(DUE_LEAD_MS, async (lead) => {
    const at = Date.now() + lead;
    const late: number[] = [];
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const ids: string[] = [];
    for (let w = 0; w < CONCURRENCY; w++)
      ids.push(
        await boss.work('due', { batchSize: 100, pollingIntervalSeconds: 0.5 }, async (jobs) => {
          for (const _ of jobs) late.push(Date.now() - at);
          if (late.length >= DUE_JOBS) allDone();
        }),
      );
    await boss.insert(
      Array.from({ length: DUE_JOBS }, (_, i) => ({ name: 'due', data: { i }, startAfter: new Date(at) })),
    );
    const margin = at - Date.now();
    await done;
    for (const id of ids) await boss.offWork({ id });
    return dueSamples(late, margin);
  });
}

/** pg-boss's 1,000 due at once alone, on a fresh database (bench/pg-due.ts). */
export async function pgBossDueAtOnce(url: string): Promise<DueAtOnce> {
  const boss = new PgBoss({ connectionString: url });
  boss.on('error', () => {});
  await boss.start();
  try {
    return await pgBossDue(boss);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

export async function pgBossLatency(url: string): Promise<PeerFigure[]> {
  const out: PeerFigure[] = [];
  const boss = new PgBoss({ connectionString: url });
  boss.on('error', () => {});
  await boss.start();
  try {
    out.push(...figures('pgboss', 'due_at_once', await pgBossDue(boss)));
    await boss.createQueue('sent');
    const d = await consumer('pgboss', url, SENT, () => paced((t) => boss.send('sent', { t })));
    out.push(...figures('pgboss', 'enqueue_to_start', d));
    await boss.createQueue('claim');
    const claimOne = async () => (await boss.fetch('claim', { batchSize: 1 })).length;
    out.push({
      peer: 'pgboss',
      metric: 'pg_claim_0_ms',
      value: await timedClaims(async () => {
        await boss.send('claim', {});
        return claimOne();
      }),
    });
    for (let i = 0; i < BACKLOG; i += 5_000)
      await boss.insert(Array.from({ length: 5_000 }, () => ({ name: 'claim', data: {} })));
    out.push({ peer: 'pgboss', metric: 'pg_claim_100k_ms', value: await timedClaims(claimOne) });
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
  return out;
}

/** 1,000 jobs due at once on graphile-worker at concurrency 10 (its runner started here). */
function graphileDue(pgPool: pg.Pool, utils: WorkerUtils): Promise<DueAtOnce> {
  return withAdaptiveLead(DUE_LEAD_MS, async (lead) => {
    const at = Date.now() + lead;
    const late: number[] = [];
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const runner = await run({
      pgPool,
      concurrency: CONCURRENCY,
      noHandleSignals: true,
      pollInterval: 100,
      logger: quiet,
      taskList: {
        due: async () => {
          late.push(Date.now() - at);
          if (late.length >= DUE_JOBS) allDone();
        },
      },
    });
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < DUE_JOBS) {
            next++;
            await utils.addJob('due', {}, { runAt: new Date(at) });
          }
        }),
      );
      const margin = at - Date.now();
      await done;
      return dueSamples(late, margin);
    } finally {
      await runner.stop();
    }
  });
}

/** graphile-worker's 1,000 due at once alone, on a fresh database (bench/pg-due.ts). */
export function graphileDueAtOnce(url: string): Promise<DueAtOnce> {
  return withGraphile(url, graphileDue);
}

export function graphileLatency(url: string): Promise<PeerFigure[]> {
  return withGraphile(url, async (pgPool, utils) => {
    const due = figures('graphile_worker', 'due_at_once_c10', await graphileDue(pgPool, utils));
    const d = await consumer('graphile_worker', url, SENT, () => paced((t) => utils.addJob('sent', { t })));
    return [...due, ...figures('graphile_worker', 'enqueue_to_start', d)];
  });
}
