/**
 * What an operator of a Postgres store should know about (issue 13 item 5), for `GET /health` and
 * `GET /metrics`: autovacuum switched off (dead rows then pile up and the tables only grow), a
 * transaction open for long (it pins the xmin horizon: no vacuum anywhere in the database can
 * remove rows deleted after it began), a Node clock that disagrees with the server's (leases and
 * due times are computed by each process's clock: two hosts apart by more than a fraction of a
 * lease take each other's runs too early or too late), LISTEN not working (wake-ups fall back to
 * the slow safety poll), and each table's size and dead rows.
 */
import { BatonError } from '../../core/index.ts';
import type { StoreHealth, StoreWarning } from '../store.ts';
import type { PgContext } from './pg-context.ts';
import type { PgWakeups } from './wakeups.ts';

/** A transaction open longer than this is reported. */
export const LONG_TRANSACTION_S = 300;
/** Node and Postgres clocks further apart than this (beyond the measurement's own uncertainty). */
export const CLOCK_SKEW_MS = 1_000;
/** Dead rows beyond this share of a table's live rows (and at least MIN_DEAD of them). */
const DEAD_SHARE = 0.5;
const MIN_DEAD = 10_000;

export interface Snapshot {
  autovacuum: string;
  track_counts: string;
  db_now_ms: number;
  oldest_xact_s: number | null;
  oldest_xact_pid: number | null;
  oldest_xact_app: string | null;
  oldest_prepared_s: number | null;
}

export interface TableRow {
  table: string;
  live: number;
  dead: number;
  bytes: number;
  autovacuum_enabled: boolean;
}

export async function storeHealth(ctx: PgContext, wakeups: PgWakeups): Promise<StoreHealth> {
  const before = ctx.now();
  const [s] = await ctx.read<Snapshot>(
    `SELECT current_setting('autovacuum') AS autovacuum,
            current_setting('track_counts') AS track_counts,
            (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS db_now_ms,
            x.age_s AS oldest_xact_s, x.pid AS oldest_xact_pid, x.app AS oldest_xact_app,
            (SELECT extract(epoch FROM clock_timestamp() - min(prepared))::float8
               FROM pg_prepared_xacts WHERE database = current_database()) AS oldest_prepared_s
     FROM (SELECT 1) one
     LEFT JOIN LATERAL (
       SELECT extract(epoch FROM clock_timestamp() - xact_start)::float8 AS age_s, pid, application_name AS app
       FROM pg_stat_activity
       WHERE backend_xmin IS NOT NULL AND xact_start IS NOT NULL AND pid <> pg_backend_pid()
         AND (datname = current_database() OR datname IS NULL)
       ORDER BY xact_start LIMIT 1) x ON true`,
  );
  const after = ctx.now();
  const tables = await ctx.read<TableRow>(
    `SELECT s.relname AS table, s.n_live_tup AS live, s.n_dead_tup AS dead,
            pg_total_relation_size(s.relid) AS bytes,
            coalesce(NOT ('autovacuum_enabled=false' = ANY (c.reloptions)), true) AS autovacuum_enabled
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.schemaname = $1 ORDER BY s.relname`,
    [ctx.t.schema],
  );
  // One row always (FROM (SELECT 1)); checked so the type needs no assertion.
  if (!s) throw new BatonError('STORE_UNAVAILABLE', `${ctx.location}: the health query returned no row`);
  return judgeHealth({
    schema: ctx.t.schema,
    snapshot: s,
    tables,
    clock: { before, after },
    listen: { wanted: wakeups.wanted, live: wakeups.live, reconnects: wakeups.stats.reconnects },
  });
}

export interface HealthReadings {
  schema: string;
  snapshot: Snapshot;
  tables: TableRow[];
  /** This process's clock just before and just after the server read its own. */
  clock: { before: number; after: number };
  listen: { wanted: boolean; live: boolean; reconnects: number };
}

/** The warnings and gauges the readings call for (pure: tested without a server). */
export function judgeHealth(r: HealthReadings): StoreHealth {
  const { snapshot: s, tables, schema } = r;
  const { before, after } = r.clock;
  const warnings: StoreWarning[] = [];
  const autovacuumOn = s.autovacuum === 'on' && s.track_counts === 'on';
  if (!autovacuumOn)
    warnings.push({
      code: 'autovacuum_off',
      message: `autovacuum is off on this server (autovacuum=${s.autovacuum}, track_counts=${s.track_counts}): rows Baton updates and deletes are never cleaned up and the tables only grow; turn it on in postgresql.conf`,
    });
  for (const t of tables.filter((t) => !t.autovacuum_enabled))
    warnings.push({
      code: 'autovacuum_off',
      message: `autovacuum is disabled for table ${schema}.${t.table} (autovacuum_enabled=false)`,
    });
  const oldest = Math.max(s.oldest_xact_s ?? 0, s.oldest_prepared_s ?? 0);
  if (oldest > LONG_TRANSACTION_S)
    warnings.push({
      code: 'long_transaction',
      message:
        (s.oldest_prepared_s ?? 0) >= (s.oldest_xact_s ?? 0)
          ? `a prepared transaction has been open for ${Math.round(oldest)} s: no vacuum in this database can remove rows deleted since; COMMIT PREPARED or ROLLBACK PREPARED it`
          : `a transaction (pid ${s.oldest_xact_pid}, application "${s.oldest_xact_app ?? ''}") has been open for ${Math.round(oldest)} s: no vacuum in this database can remove rows deleted since it began`,
    });
  // The server's clock was read somewhere between `before` and `after` by this process's clock.
  const uncertainty = (after - before) / 2;
  const skew = s.db_now_ms - (before + after) / 2;
  if (Math.abs(skew) - uncertainty > CLOCK_SKEW_MS)
    warnings.push({
      code: 'clock_skew',
      message: `this process's clock is ${Math.round(Math.abs(skew))} ms ${skew > 0 ? 'behind' : 'ahead of'} the database server's: leases and due times are computed by each process's clock, so processes on hosts with different clocks take runs over too early or too late; synchronize the clocks (NTP)`,
    });
  const listenBroken = r.listen.wanted && !r.listen.live;
  if (listenBroken)
    warnings.push({
      code: 'listen_unavailable',
      message: `LISTEN is not working (reconnected ${r.listen.reconnects} times): work from other processes is found by the slow safety poll; behind a transaction-mode pooler use ?wakeups=poll`,
    });
  for (const t of tables)
    if (t.dead > MIN_DEAD && t.dead > t.live * DEAD_SHARE)
      warnings.push({
        code: 'dead_rows',
        message: `table ${schema}.${t.table} holds ${t.dead} dead rows for ${t.live} live ones: vacuum is not keeping up (autovacuum off, or a long transaction pinning the horizon)`,
      });
  return {
    warnings,
    gauges: [
      { name: 'baton_pg_autovacuum', help: 'Autovacuum is on (1) or off (0).', value: autovacuumOn ? 1 : 0 },
      {
        name: 'baton_pg_oldest_transaction_seconds',
        help: 'Age of the oldest open transaction (or prepared transaction) holding back vacuum.',
        value: oldest,
      },
      {
        name: 'baton_pg_clock_skew_ms',
        help: "The database server's clock minus this process's clock.",
        value: Math.round(skew),
      },
      {
        name: 'baton_pg_listening',
        help: 'The LISTEN connection for wake-ups is up (1), wanted but down (0); absent when not used.',
        value: listenBroken ? 0 : r.listen.live ? 1 : -1,
      },
      ...tables.flatMap((t) => [
        {
          name: 'baton_pg_table_bytes',
          help: "Size of each of the store's tables with its indexes and TOAST.",
          value: t.bytes,
          labels: { table: t.table },
        },
        {
          name: 'baton_pg_dead_rows',
          help: "Dead row versions in each of the store's tables (as the statistics collector estimates).",
          value: t.dead,
          labels: { table: t.table },
        },
      ]),
    ],
  };
}
