/**
 * 1,000 runs due at one instant on Postgres (issue 13: p99 below the best peer's), Baton beside the
 * peers in alternating rounds of the same run, each system on a fresh database: the machine is
 * shared and one round moves 2× with its load, so the medians of the rounds are what to compare.
 *
 * Like for like, by jobs in flight (bench/_pg-peers-latency.ts): up to 1,000 — Baton at concurrency
 * 1,000 beside pg-boss's ten subscriptions fetching batches of 100 — and 10 — Baton at concurrency 10
 * beside graphile-worker at concurrency 10. `npm run bench -- pg-due`; the full peer table is
 * bench/peers.ts.
 */
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { DueAtOnce } from './_peer-due.ts';
import { withDatabase } from './_pg-peers.ts';
import { batonDueAtOnce, graphileDueAtOnce, pgBossDueAtOnce } from './_pg-peers-latency.ts';
import { type BenchMetric, median, round } from './_stats.ts';

const ROUNDS = 3;

function batonAt(concurrency: number): (url: string) => Promise<DueAtOnce> {
  return async (url) => {
    const store = await openPostgresStore({ connectionString: url });
    try {
      return await batonDueAtOnce(store, concurrency);
    } finally {
      await store.close();
    }
  };
}

const SYSTEMS: Record<string, (url: string) => Promise<DueAtOnce>> = {
  baton: batonAt(1_000),
  pgboss: pgBossDueAtOnce,
  baton_c10: batonAt(10),
  graphile_worker_c10: graphileDueAtOnce,
};

export default async function bench(): Promise<BenchMetric[]> {
  const rounds = new Map<string, DueAtOnce[]>(Object.keys(SYSTEMS).map((s) => [s, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const [system, measure] of Object.entries(SYSTEMS)) {
      const d = await withDatabase(measure);
      rounds.get(system)?.push(d);
      console.log(
        `  pg-due round ${r + 1}/${ROUNDS} ${system}: p50 ${round(d.p50)} / p99 ${round(d.p99)} ms`,
      );
    }
  const out: BenchMetric[] = [];
  for (const [system, list] of rounds)
    for (const q of ['p50', 'p99'] as const)
      out.push({
        metric: `pg_due.${system}_${q}_ms`,
        value: round(median(list.map((d) => d[q]))),
        unit: 'ms',
      });
  return out;
}
