/**
 * Retention on Postgres (issue 13 item 5): do the tables stay small when expired runs are deleted
 * in batches, with the hot-table settings of migration 0020 and without them?
 *
 * Steady creation on a manual clock — 60 runs a simulated minute, each with 6 events of ~300 bytes,
 * finished and kept for a TTL of one hour — with the sweep (500 run trees per transaction) every
 * 10 simulated minutes, for 8 simulated hours, on a private cluster with autovacuum on (naptime
 * 1 s, so a real run of a minute or two sees it work; the default is 1 min). Printed: the schema's
 * tables with indexes at simulated hours 3 and 8 and their ratio (bounded means ≈ 1), for the
 * migration's settings (`retention_pg.*`) and with the settings reset to the server defaults
 * (`retention_pg.untuned_*`), in the same run; plus the dead rows left in `events` at the end.
 */
import pg from 'pg';
import { openPostgresStore, type PostgresStore } from '../src/store/postgres/index.ts';
import { ManualClock } from '../src/time/index.ts';
import { PrivateCluster } from '../test/fixtures/pg-private-cluster.ts';
import { retentionBatch } from './_retention-runs.ts';

const PER_MINUTE = 60;
const TTL_MS = 3_600_000;
const SWEEP_EVERY_MIN = 10;
const HOT = ['runs', 'timers', 'deliveries', 'workers', 'events', 'steps', 'checkpoints'];

async function schemaMb(store: PostgresStore): Promise<number> {
  const [row] = (
    await store.pool.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [store.schema],
    )
  ).rows as Array<{ bytes: number }>;
  return Math.round(((row?.bytes ?? 0) / 1_048_576) * 100) / 100;
}

async function addFinished(
  store: PostgresStore,
  prefix: string,
  n: number,
  expiresAt: number,
): Promise<void> {
  const { ids, runs, events } = retentionBatch(prefix, 0, n);
  await store.createRuns(runs, events);
  await store.pool.query(
    `UPDATE ${pg.escapeIdentifier(store.schema)}.runs SET status = 'succeeded', expires_at = $1 WHERE id = ANY($2::text[])`,
    [expiresAt, ids],
  );
}

async function steadyState(url: string, schema: string, tuned: boolean) {
  const clock = new ManualClock('2026-11-22T00:00:00Z');
  const store = await openPostgresStore({ connectionString: url, schema, clock });
  if (!tuned)
    for (const t of HOT)
      await store.pool.query(
        `ALTER TABLE ${pg.escapeIdentifier(schema)}.${t} RESET (fillfactor, autovacuum_vacuum_scale_factor,
           autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor, autovacuum_vacuum_cost_delay,
           autovacuum_vacuum_insert_scale_factor)`,
      );
  const sizes = new Map<number, number>();
  for (let minute = 1; minute <= 8 * 60; minute++) {
    await addFinished(store, `m${minute}-`, PER_MINUTE, clock.now() + TTL_MS);
    await clock.advance(60_000);
    if (minute % SWEEP_EVERY_MIN === 0) while ((await store.sweep()).runs > 0);
    if (minute === 3 * 60 || minute === 8 * 60) sizes.set(minute / 60, await schemaMb(store));
  }
  const [dead] = (
    await store.pool.query(
      `SELECT n_dead_tup::int AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'events'`,
      [schema],
    )
  ).rows as Array<{ n: number }>;
  await store.close();
  const h3 = sizes.get(3) ?? 0;
  const h8 = sizes.get(8) ?? 0;
  return { h3, h8, growth: Math.round((h8 / h3) * 100) / 100, deadEvents: dead?.n ?? 0 };
}

export default async function bench(): Promise<Array<{ metric: string; value: number; unit: string }>> {
  const cluster = await PrivateCluster.start({ autovacuum_naptime: '1s', fsync: 'off' });
  try {
    // Both schemas fill at once, so autovacuum and the machine's load treat them alike.
    const [tuned, untuned] = await Promise.all([
      steadyState(cluster.url, 'tuned', true),
      steadyState(cluster.url, 'untuned', false),
    ]);
    return [
      { metric: 'retention_pg.mb_h3', value: tuned.h3, unit: 'MB' },
      { metric: 'retention_pg.mb_h8', value: tuned.h8, unit: 'MB' },
      { metric: 'retention_pg.growth_h3_to_h8', value: tuned.growth, unit: '×' },
      { metric: 'retention_pg.dead_events_h8', value: tuned.deadEvents, unit: 'rows' },
      { metric: 'retention_pg.untuned_mb_h8', value: untuned.h8, unit: 'MB' },
      { metric: 'retention_pg.untuned_growth_h3_to_h8', value: untuned.growth, unit: '×' },
      { metric: 'retention_pg.untuned_dead_events_h8', value: untuned.deadEvents, unit: 'rows' },
    ];
  } finally {
    cluster.destroy();
  }
}
