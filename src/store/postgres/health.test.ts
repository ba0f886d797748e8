/**
 * Table health (issue 13 item 5): the hot tables' storage settings, and the warnings and gauges a
 * Postgres store reports for /health and /metrics — judged from readings (pure), and read from the
 * real server (whose autovacuum setting the test follows: the local one runs with it off).
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { describePostgres, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { CLOCK_SKEW_MS, type HealthReadings, judgeHealth, LONG_TRANSACTION_S } from './health.ts';

const schemas = testSchemas();

const calm: HealthReadings = {
  schema: 'baton',
  snapshot: {
    autovacuum: 'on',
    track_counts: 'on',
    db_now_ms: 1_000_050,
    oldest_xact_s: 2,
    oldest_xact_pid: 42,
    oldest_xact_app: 'psql',
    oldest_prepared_s: null,
  },
  tables: [{ table: 'runs', live: 1_000, dead: 10, bytes: 65_536, autovacuum_enabled: true }],
  clock: { before: 1_000_000, after: 1_000_100 },
  listen: { wanted: true, live: true, reconnects: 0 },
};

const codes = (r: HealthReadings) => judgeHealth(r).warnings.map((w) => w.code);

it('warns about nothing on a healthy server, and reports the gauges', () => {
  const health = judgeHealth(calm);
  expect(health.warnings).toEqual([]);
  const gauge = (name: string) => health.gauges.find((g) => g.name === name)?.value;
  expect(gauge('baton_pg_autovacuum')).toBe(1);
  expect(gauge('baton_pg_oldest_transaction_seconds')).toBe(2);
  expect(gauge('baton_pg_clock_skew_ms')).toBe(0);
  expect(gauge('baton_pg_listening')).toBe(1);
  expect(health.gauges.filter((g) => g.labels?.table === 'runs').map((g) => [g.name, g.value])).toEqual([
    ['baton_pg_table_bytes', 65_536],
    ['baton_pg_dead_rows', 10],
  ]);
});

it('warns about autovacuum off, on the server or on one table', () => {
  expect(codes({ ...calm, snapshot: { ...calm.snapshot, autovacuum: 'off' } })).toEqual(['autovacuum_off']);
  expect(codes({ ...calm, snapshot: { ...calm.snapshot, track_counts: 'off' } })).toEqual(['autovacuum_off']);
  const table = { ...calm.tables[0]!, autovacuum_enabled: false };
  expect(judgeHealth({ ...calm, tables: [table] }).warnings[0]?.message).toContain('baton.runs');
});

it('warns about a transaction or a prepared transaction pinning the xmin horizon', () => {
  const long = { ...calm.snapshot, oldest_xact_s: LONG_TRANSACTION_S + 1 };
  expect(judgeHealth({ ...calm, snapshot: long }).warnings).toEqual([
    { code: 'long_transaction', message: expect.stringContaining('pid 42, application "psql"') },
  ]);
  const prepared = { ...calm.snapshot, oldest_prepared_s: LONG_TRANSACTION_S + 60 };
  expect(judgeHealth({ ...calm, snapshot: prepared }).warnings[0]?.message).toContain('ROLLBACK PREPARED');
  expect(codes({ ...calm, snapshot: { ...calm.snapshot, oldest_xact_s: LONG_TRANSACTION_S - 1 } })).toEqual(
    [],
  );
});

it('warns about clock skew beyond what the round trip leaves uncertain', () => {
  const at = (ms: number) => ({ ...calm, snapshot: { ...calm.snapshot, db_now_ms: ms } });
  // Read between 1,000,000 and 1,000,100: the server's clock is known to ±50 ms around 1,000,050.
  expect(codes(at(1_000_050 + CLOCK_SKEW_MS + 40))).toEqual([]);
  expect(judgeHealth(at(1_000_050 + CLOCK_SKEW_MS + 60)).warnings[0]?.message).toContain('behind');
  expect(judgeHealth(at(1_000_050 - CLOCK_SKEW_MS - 60)).warnings[0]?.message).toContain('ahead of');
});

it('warns when LISTEN is wanted but down, not when the store polls by choice', () => {
  expect(codes({ ...calm, listen: { wanted: true, live: false, reconnects: 3 } })).toEqual([
    'listen_unavailable',
  ]);
  const poll = judgeHealth({ ...calm, listen: { wanted: false, live: false, reconnects: 0 } });
  expect(poll.warnings).toEqual([]);
  expect(poll.gauges.find((g) => g.name === 'baton_pg_listening')?.value).toBe(-1);
});

it('warns about a table whose dead rows outgrow its live ones', () => {
  const bloated = { ...calm.tables[0]!, live: 20_000, dead: 30_000 };
  expect(codes({ ...calm, tables: [bloated] })).toEqual(['dead_rows']);
  expect(codes({ ...calm, tables: [{ ...bloated, dead: 9_000 }] })).toEqual([]);
});

describePostgres('Postgres table health on the real server', () => {
  it('sets fillfactor and autovacuum on the hot tables, and reports what the server shows', async () => {
    const schema = schemas.fresh();
    // A clock an hour behind the server's: the store must say so.
    const store = await schemas.open(new ManualClock(Date.now() - 3_600_000), schema);
    const reloptions = await withClient(async (c) => {
      const r = await c.query(
        `SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname IN ('runs', 'timers', 'workers') ORDER BY 1`,
        [schema],
      );
      return Object.fromEntries(r.rows.map((x) => [x.relname, x.reloptions as string[]]));
    });
    expect(reloptions.runs).toContain('fillfactor=80');
    expect(reloptions.timers).toContain('fillfactor=70');
    expect(reloptions.workers).toContain('autovacuum_vacuum_threshold=100');
    // A transaction holding a snapshot, open while the store looks.
    const holder = new pg.Client({
      connectionString: (store.pool.options as pg.PoolConfig).connectionString,
    });
    await holder.connect();
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder.query('SELECT 1');
    try {
      const health = await store.health();
      const server = await withClient((c) => c.query(`SELECT current_setting('autovacuum') AS a`));
      const codes = health.warnings.map((w) => w.code);
      expect(codes.includes('autovacuum_off')).toBe(server.rows[0].a !== 'on');
      expect(codes).toContain('clock_skew');
      const gauge = (name: string) => health.gauges.find((g) => g.name === name)?.value ?? Number.NaN;
      expect(gauge('baton_pg_clock_skew_ms')).toBeGreaterThan(3_500_000);
      expect(gauge('baton_pg_oldest_transaction_seconds')).toBeGreaterThan(0);
      expect(health.gauges.some((g) => g.name === 'baton_pg_table_bytes' && g.labels?.table === 'runs')).toBe(
        true,
      );
      expect(gauge('baton_pg_listening')).toBe(-1);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
      await store.close();
    }
  });
});
