/**
 * Enqueue → start across processes on Postgres (issue 13: p50 ≤ 3 ms, p99 ≤ 15 ms), Baton beside
 * graphile-worker — the best peer on this row (it listens; pg-boss polls every 0.5 s at best) — in
 * alternating rounds of the same run, each on a fresh database: the machine is shared and one round
 * moves 2× with its load, so the medians of the rounds are what to compare. One round: a process
 * enqueues 200 jobs, one every 10 ms, another process starts them (bench/_pg-peers-latency.ts).
 * `npm run bench -- pg-enqueue-start`. The full peer table is bench/peers.ts.
 */
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { withDatabase } from './_pg-peers.ts';
import { batonEnqueueToStart, graphileEnqueueToStart } from './_pg-peers-latency.ts';
import { type BenchMetric, median, round } from './_stats.ts';

const ROUNDS = 3;

export default async function bench(): Promise<BenchMetric[]> {
  const rounds: Record<'baton' | 'graphile_worker', Array<{ p50: number; p99: number }>> = {
    baton: [],
    graphile_worker: [],
  };
  for (let r = 0; r < ROUNDS; r++) {
    rounds.baton.push(
      await withDatabase(async (url) => {
        const store = await openPostgresStore({ connectionString: url });
        try {
          return await batonEnqueueToStart(store, url);
        } finally {
          await store.close();
        }
      }),
    );
    rounds.graphile_worker.push(await withDatabase(graphileEnqueueToStart));
  }
  const out: BenchMetric[] = [];
  for (const [system, list] of Object.entries(rounds))
    for (const q of ['p50', 'p99'] as const)
      out.push({
        metric: `pg_enqueue_start.${system}_${q}_ms`,
        value: round(median(list.map((d) => d[q])), 2),
        unit: 'ms',
      });
  return out;
}
