/**
 * DBOS Transact on the local Postgres (database `test`, its own schema baton_bench_dbos), the same
 * jobs as Baton's in bench/peers.ts: the cost of a durable step, no-op workflows through a queue
 * with worker concurrency 10, and workflows enqueued with a delay so that all are due at once.
 * DBOS is a process-wide singleton: one launch serves every figure, shut down at the end.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { type DueAtOnce, dueSamples, withAdaptiveLead } from './_peer-due.ts';
import { DBOS_SCHEMA, PG_URL } from './_peer-recovery.ts';
import { median } from './_stats.ts';

export interface DbosFigures {
  stepMs: number;
  throughputPerSecond: number;
  due: DueAtOnce;
}

/** Enqueued together, as Baton's and BullMQ's jobs are added in chunks (the pool has 10 connections). */
const ENQUEUE_CHUNK = 50;
const late: number[] = [];
let dueAt = 0;
let completed = 0;
let onCompleted: () => void = () => {};

const loop = DBOS.registerWorkflow(
  async (n: number) => {
    let sum = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sum += await DBOS.runStep(async () => i, { name: `s${i}` });
    if (sum < 0) throw new Error('unreachable');
    return performance.now() - t0;
  },
  { name: 'bench_loop' },
);
const direct = DBOS.registerWorkflow(
  async (n: number) => {
    let sum = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sum += await (async () => i)();
    if (sum < 0) throw new Error('unreachable');
    return performance.now() - t0;
  },
  { name: 'bench_direct' },
);
const noop = DBOS.registerWorkflow(
  async () => {
    completed++;
    onCompleted();
    return 'ok';
  },
  { name: 'bench_noop' },
);
const due = DBOS.registerWorkflow(
  async () => {
    late.push(Date.now() - dueAt);
    onCompleted();
  },
  { name: 'bench_due' },
);

async function stepMs(steps: number, rounds: number): Promise<number> {
  const run = async (wf: typeof loop) => (await (await DBOS.startWorkflow(wf)(steps)).getResult()) as number;
  await run(loop);
  const durable: number[] = [];
  const plain: number[] = [];
  for (let r = 0; r < rounds; r++) {
    durable.push(await run(loop));
    plain.push(await run(direct));
  }
  return (median(durable) - median(plain)) / steps;
}

async function throughput(count: number, queueName: string): Promise<number> {
  completed = 0;
  const done = new Promise<void>((resolve) => {
    onCompleted = () => {
      if (completed === count) resolve();
    };
  });
  const t0 = performance.now();
  for (let i = 0; i < count; i += ENQUEUE_CHUNK)
    await Promise.all(
      Array.from({ length: Math.min(ENQUEUE_CHUNK, count - i) }, () =>
        DBOS.startWorkflow(noop, { queueName })(),
      ),
    );
  await done;
  return count / ((performance.now() - t0) / 1000);
}

async function dueAtOnce(count: number, leadMs: number, queueName: string): Promise<DueAtOnce> {
  late.length = 0;
  dueAt = Date.now() + leadMs;
  const done = new Promise<void>((resolve) => {
    onCompleted = () => {
      if (late.length === count) resolve();
    };
  });
  for (let i = 0; i < count; i += ENQUEUE_CHUNK)
    await Promise.all(
      Array.from({ length: Math.min(ENQUEUE_CHUNK, count - i) }, () =>
        DBOS.startWorkflow(due, {
          queueName,
          enqueueOptions: { delaySeconds: (dueAt - Date.now()) / 1000 },
        })(),
      ),
    );
  const margin = dueAt - Date.now();
  await done;
  return dueSamples(late, margin);
}

export async function dbosFigures(opts: {
  steps: number;
  stepRounds: number;
  throughputCount: number;
  dueCount: number;
  dueLeadMs: number;
  concurrency: number;
}): Promise<DbosFigures> {
  DBOS.setConfig({
    name: 'baton-bench',
    systemDatabaseUrl: PG_URL,
    systemDatabaseSchemaName: DBOS_SCHEMA,
    logLevel: 'error',
  });
  await DBOS.launch();
  try {
    const queue = `baton_bench_${process.pid}`;
    // The queue's dispatch polls once a second by default (≈10 workflows/s at concurrency 10): poll
    // every 10 ms, DBOS at its fastest rather than at its default.
    await DBOS.registerQueue(queue, {
      workerConcurrency: opts.concurrency,
      minPollingIntervalMs: 10,
      onConflict: 'always_update',
    });
    return {
      stepMs: await stepMs(opts.steps, opts.stepRounds),
      throughputPerSecond: await throughput(opts.throughputCount, queue),
      due: await withAdaptiveLead(opts.dueLeadMs, (lead) => dueAtOnce(opts.dueCount, lead, queue)),
    };
  } finally {
    await DBOS.shutdown();
  }
}
