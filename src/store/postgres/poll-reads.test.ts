/**
 * A worker's poll sends its statements outside the write queue in one round trip when they are
 * asked for in the same turn (poll-reads.ts), and the lease probe rides with the look for dead
 * workers on this host. A failing statement fails alone, and one that wrote is not applied twice.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { T0, task } from '../store.contract.ts';
import { countingClient, describePostgres, PG_URL, testSchemas } from './fixtures/pg-test-server.ts';
import { openPostgresStore, type PostgresStore } from './index.ts';
import { PollReads } from './poll-reads.ts';

const schemas = testSchemas();

/** Counts the messages the store's clients send (one per round trip). */
const { Client: CountingClient, messages } = countingClient();

describePostgres('Postgres poll statements', () => {
  let store: PostgresStore | undefined;
  let pool: pg.Pool;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await pool.end();
  });

  it("sends an idle poll's recovery look, lease probe, claim and timer take in one round trip", async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 4, Client: CountingClient });
    const clock = new ManualClock(T0);
    store = await openPostgresStore({ pool, schema: schemas.fresh(), clock });
    const s = store;
    await s.registerWorker({
      id: 'w1',
      host: 'h',
      pid: 1,
      processStart: '1',
      startedAt: T0,
      heartbeatAt: T0,
    });
    messages.sent = 0;
    const [workers, claimed, timers] = await Promise.all([
      s.listWorkers('h'),
      s.claimRuns({ owner: 'w1', leaseMs: 1_000, limit: 10, names: ['work'] }),
      s.takeDueTimers(100),
    ]);
    expect([workers.map((w) => w.id), claimed, timers]).toEqual([['w1'], [], []]);
    expect(await s.recoverExpiredLeases()).toEqual([]);
    expect(messages.sent).toBe(1);
  });

  it('still recovers a lease that expired, and asks again once the clock has moved', async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    const clock = new ManualClock(T0);
    store = await openPostgresStore({ pool, schema: schemas.fresh(), clock });
    const s = store;
    await s.createRuns([task('r1')], []);
    expect(await s.claimRuns({ owner: 'gone', leaseMs: 1_000, limit: 1, names: ['work'] })).toHaveLength(1);
    await s.listWorkers('h');
    await clock.advance(1_001);
    // The answer read with the workers (nothing expired then) is not used: the clock jumped.
    expect(await s.recoverExpiredLeases()).toEqual([{ runId: 'r1', previousOwner: 'gone' }]);
  });

  it('fails a statement alone and applies a write that shared its message once', async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    const schema = schemas.fresh();
    await pool.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".t (v int)`);
    const reads = new PollReads(pool);
    const [inserted, missing, one] = await Promise.allSettled([
      reads.read(`INSERT INTO "${schema}".t VALUES ($1) RETURNING v`, [7]),
      reads.read(`SELECT * FROM "${schema}".no_such_table WHERE v = $1`, [1]),
      reads.read('SELECT $1::int AS a', [1]),
    ]);
    expect(inserted).toEqual({ status: 'fulfilled', value: [{ v: 7 }] });
    expect(missing.status === 'rejected' && (missing.reason as { code?: string }).code).toBe('42P01');
    expect(one).toEqual({ status: 'fulfilled', value: [{ a: 1 }] });
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".t`)).rows).toEqual([{ n: 1 }]);
    expect(reads.stats).toEqual({ messages: 1, statements: 3 });
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('prepares a statement sent alone once per connection, unless told not to (poolers)', async () => {
    // One connection: what it has prepared is what the next query on the pool sees.
    pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    const prepared = async () =>
      (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map(
        (r) => r.statement,
      );
    const reads = new PollReads(pool);
    expect(await reads.read('SELECT $1::int + 1 AS a', [1])).toEqual([{ a: 2 }]);
    expect(await reads.read('SELECT $1::int + 1 AS a', [2])).toEqual([{ a: 3 }]);
    expect(await prepared()).toEqual(['SELECT $1::int + 1 AS a']);
    reads.prepare = false;
    expect(await reads.read('SELECT $1::int + 2 AS b', [1])).toEqual([{ b: 3 }]);
    expect(await prepared()).toEqual(['SELECT $1::int + 1 AS a']);
  });

  it('runs a prepared statement again unprepared when its table gained a column under it', async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    const schema = schemas.fresh();
    await pool.query(
      `CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".t (v int); INSERT INTO "${schema}".t VALUES (1)`,
    );
    const reads = new PollReads(pool);
    const text = `SELECT * FROM "${schema}".t WHERE v = $1`;
    expect(await reads.read(text, [1])).toEqual([{ v: 1 }]);
    // What a newer process's migration does to the table this session has a plan for.
    await pool.query(`ALTER TABLE "${schema}".t ADD COLUMN w int DEFAULT 2`);
    expect(await reads.read(text, [1])).toEqual([{ v: 1, w: 2 }]);
    expect(await reads.read(text, [1])).toEqual([{ v: 1, w: 2 }]);
  });

  it("prepares a claim alone, and nothing in 'poll' mode", async () => {
    for (const wakeups of ['listen', 'poll'] as const) {
      // One connection: the claim ran on the session the count reads.
      pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
      store = await openPostgresStore({ pool, schema: schemas.fresh(), clock: new ManualClock(T0), wakeups });
      await store.createRuns([task('r1')], []);
      expect(await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] })).toHaveLength(
        1,
      );
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%claimed AS%'`,
      );
      expect([wakeups, rows]).toEqual([wakeups, [{ n: wakeups === 'poll' ? 0 : 1 }]]);
      await store.close();
      store = undefined;
      await pool.end();
    }
    pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  });
});
