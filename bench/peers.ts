/**
 * Baton beside the peers that do the same jobs, on this machine, in the same run (issue 18). Each
 * figure is `peers.<figure>.<system>`; the harness prints Baton's beside the best peer's with the
 * ratio (bench/_peer-table.ts). Rounds alternate between the systems so that they share the load.
 *
 * - step_ms: per durable step of a loop in one run, minus the same loop without durability. Baton
 *   `ctx.step` on SQLite (fsync per commit), DBOS `DBOS.runStep` on Postgres (LangGraph's SQLite
 *   checkpointer per superstep comes from bench/langgraph.ts when that module runs too).
 * - throughput_c10_per_s: no-op jobs through one worker process at concurrency 10, enqueued in
 *   chunks while it works. Baton and BullMQ 3,000 jobs (median of 3), DBOS 500 through a queue
 *   polled every 10 ms (its default, 1 s, gives ≈10 workflows/s).
 * - due_at_once_p50_ms / _p99_ms: 1,000 delayed jobs all due at the same instant, concurrency 10;
 *   lateness = the moment the body starts − the due instant. Median over rounds.
 * - recovery_ms: a worker process holding a job is SIGKILLed; from its death until a newly spawned
 *   process starts the job again (bench/_peer-recovery.ts). Median of 3.
 *
 * - sqlite_commit_floor_ms: a raw fsync'd SQLite commit on the same disk, for scale (not a peer).
 *
 * Postgres peers (pg-boss, graphile-worker) come from bench/_pg-peers.ts: figures named pg_*, where
 * `baton` is Baton on Postgres (issue 13 item 7).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { batonDueAtOnce, batonStepMs, commitFloorMs } from './_peer-baton.ts';
import { bullmqDueAtOnce, bullmqThroughput } from './_peer-bullmq.ts';
import { dbosFigures } from './_peer-dbos.ts';
import { type DueAtOnce, withAdaptiveLead } from './_peer-due.ts';
import { batonRecoveryMs, bullmqRecoveryMs, dbosRecoveryMs } from './_peer-recovery.ts';
import { type BenchMetric, median, round, withTempDir } from './_stats.ts';
import { measureThroughput } from './_throughput.ts';

/** Measured again with one core busy by the harness (issue 18 item 5). */
export const headline = true;

const ROUNDS = 3;
const CONCURRENCY = 10;
const THROUGHPUT_JOBS = 3_000;
const DBOS_THROUGHPUT_JOBS = 500;
const DUE_JOBS = 1_000;
/** Enqueueing 1,000 jobs takes 0.1–1 s here depending on the load; the due instant comes well after. */
const DUE_LEAD_MS = 3_000;

type Figure =
  | 'step_ms'
  | 'throughput_c10_per_s'
  | 'due_at_once_p50_ms'
  | 'due_at_once_p99_ms'
  | 'recovery_ms';

function metric(figure: Figure, system: string, value: number): BenchMetric {
  return {
    metric: `peers.${figure}.${system}`,
    value: round(value),
    unit: figure.endsWith('_per_s') ? 'runs/s' : 'ms',
  };
}

function dueMetrics(system: string, rounds: readonly DueAtOnce[]): BenchMetric[] {
  return [
    metric('due_at_once_p50_ms', system, median(rounds.map((r) => r.p50))),
    metric('due_at_once_p99_ms', system, median(rounds.map((r) => r.p99))),
  ];
}

async function postgresPeers(): Promise<BenchMetric[]> {
  const file = join(import.meta.dirname, '_pg-peers.ts');
  if (!existsSync(file)) return [];
  const mod = (await import(pathToFileURL(file).href)) as {
    pgPeers?: () => Promise<Array<{ peer: string; metric: string; value: number }>>;
  };
  if (typeof mod.pgPeers !== 'function') return [];
  return (await mod.pgPeers()).map((m) => metric(m.metric as Figure, m.peer, m.value));
}

export default async function bench(): Promise<BenchMetric[]> {
  return withTempDir('peers', async (dir) => {
    const step: number[] = [];
    const floor: number[] = [];
    const batonTp: number[] = [];
    const bullTp: number[] = [];
    const batonDue: DueAtOnce[] = [];
    const bullDue: DueAtOnce[] = [];
    const batonRec: number[] = [];
    const bullRec: number[] = [];
    const dbosRec: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      floor.push(commitFloorMs(join(dir, `floor-${r}.db`), 200));
      step.push(await batonStepMs(join(dir, `step-${r}.db`), 1_000, 3));
      batonTp.push(
        (await measureThroughput(join(dir, `tp-${r}.db`), CONCURRENCY, THROUGHPUT_JOBS)).perSecond,
      );
      bullTp.push(await bullmqThroughput(THROUGHPUT_JOBS, CONCURRENCY));
      await withTempDir('peers-due', async (d) => {
        batonDue.push(
          await withAdaptiveLead(DUE_LEAD_MS, (lead) => batonDueAtOnce(d, DUE_JOBS, lead, CONCURRENCY)),
        );
      });
      bullDue.push(
        await withAdaptiveLead(DUE_LEAD_MS, (lead) => bullmqDueAtOnce(DUE_JOBS, lead, CONCURRENCY)),
      );
      batonRec.push(await batonRecoveryMs(dir, r));
      bullRec.push(await bullmqRecoveryMs(r));
      dbosRec.push(await dbosRecoveryMs(r));
      console.log(
        `  peers round ${r + 1}/${ROUNDS}: commit floor ${round(floor[r]!)} ms, step ${round(step[r]!)} ms, c10 ${Math.round(batonTp[r]!)} vs BullMQ ${Math.round(bullTp[r]!)} runs/s, due p99 ${round(batonDue[r]!.p99)} vs ${round(bullDue[r]!.p99)} ms, recovery ${Math.round(batonRec[r]!)} / ${Math.round(bullRec[r]!)} / ${Math.round(dbosRec[r]!)} ms`,
      );
    }
    const dbos = await dbosFigures({
      steps: 200,
      stepRounds: ROUNDS,
      throughputCount: DBOS_THROUGHPUT_JOBS,
      dueCount: DUE_JOBS,
      dueLeadMs: DUE_LEAD_MS,
      concurrency: CONCURRENCY,
    });
    return [
      { metric: 'peers.sqlite_commit_floor_ms', value: round(median(floor)), unit: 'ms' },
      metric('step_ms', 'baton', median(step)),
      metric('step_ms', 'dbos', dbos.stepMs),
      metric('throughput_c10_per_s', 'baton', median(batonTp)),
      metric('throughput_c10_per_s', 'bullmq', median(bullTp)),
      metric('throughput_c10_per_s', 'dbos', dbos.throughputPerSecond),
      ...dueMetrics('baton', batonDue),
      ...dueMetrics('bullmq', bullDue),
      ...dueMetrics('dbos', [dbos.due]),
      metric('recovery_ms', 'baton', median(batonRec)),
      metric('recovery_ms', 'bullmq', median(bullRec)),
      metric('recovery_ms', 'dbos', median(dbosRec)),
      ...(await postgresPeers()),
    ];
  });
}
