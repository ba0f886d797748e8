/**
 * The consuming process of bench/_pg-peers-latency.ts (enqueue → start across processes): runs one
 * system's worker (argv: baton | pgboss | graphile_worker, the database URL, how many jobs), prints
 * `ready` once it listens, and when it has started that many jobs prints their latencies (ms from
 * the `t` each job carries, the producer's clock, to the body's start) as one JSON line and exits.
 */
import { makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { createBaton, defineTask } from '../../src/index.ts';
import { clockMs, quiet } from '../_pg-peers-latency.ts';

const [system, url, countText] = process.argv.slice(2) as [string, string, string];
const count = Number(countText);
const latencies: number[] = [];
let finish!: () => void;
const finished = new Promise<void>((resolve) => {
  finish = resolve;
});
const started = (data: unknown) => {
  latencies.push(clockMs() - (data as { t: number }).t);
  if (latencies.length === count) finish();
};

let stop: () => Promise<unknown>;
if (system === 'baton') {
  const task = defineTask({
    name: 'bench.sent',
    retry: false,
    run: (input: { t: number }) => started(input),
  });
  const baton = createBaton({ store: url, tasks: [task], worker: { concurrency: 10 } });
  await baton.ready();
  stop = () => baton.close();
} else if (system === 'pgboss') {
  const boss = new PgBoss({ connectionString: url });
  boss.on('error', () => {});
  await boss.start();
  for (let w = 0; w < 10; w++)
    await boss.work('sent', { batchSize: 100, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      for (const job of jobs) started(job.data);
    });
  stop = () => boss.stop({ graceful: false, wait: true });
} else {
  const pgPool = new pg.Pool({ connectionString: url, max: 12 });
  pgPool.on('error', () => {});
  // Creates graphile-worker's schema before the producer adds its first job.
  await (await makeWorkerUtils({ pgPool, logger: quiet })).release();
  const runner = await run({
    pgPool,
    concurrency: 10,
    noHandleSignals: true,
    pollInterval: 100,
    logger: quiet,
    taskList: { sent: async (payload) => started(payload) },
  });
  stop = async () => {
    await runner.stop();
    await pgPool.end();
  };
}
process.stdout.write('ready\n');
await finished;
process.stdout.write(`${JSON.stringify(latencies)}\n`);
await stop().catch(() => {});
process.exit(0);
