import { expect, it } from 'vitest';
import { isBatonError, newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import { openSqliteStore } from '../sqlite/index.ts';
import { expectCode, runStoreContract, T0, task } from '../store.contract.ts';
import { runStoreDeliveryContract } from '../store-deliveries.contract.ts';
import { runStoreFlowContract } from '../store-flow.contract.ts';
import { describePostgres, PG_URL, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { listPostgresMigrations, openPostgresStore } from './index.ts';

const schemas = testSchemas();
const harness = { newStore: (clock: ManualClock) => schemas.open(clock, schemas.fresh()) };

describePostgres('Postgres store', () => {
  runStoreContract('postgres', harness);
  runStoreFlowContract('postgres', harness);
  runStoreDeliveryContract('postgres', harness);
});

describePostgres('Postgres store specifics', () => {
  const known = Math.max(...listPostgresMigrations().map((m) => m.version));

  it('applies migrations once when two stores open a new schema at the same time', async () => {
    const schema = schemas.fresh();
    const clock = new ManualClock(T0);
    const stores = await Promise.all([1, 2, 3].map(() => schemas.open(clock, schema)));
    const rows = await withClient((c) =>
      c.query(`SELECT version FROM ${schema}.baton_migrations ORDER BY version`),
    );
    expect(rows.rows.map((r) => r.version)).toEqual(listPostgresMigrations().map((m) => m.version));
    await stores[0]?.createRuns([task('r1')], []);
    expect((await stores[2]?.getRun('r1'))?.status).toBe('queued');
    await Promise.all(stores.map((s) => s.close()));
  });

  it('refuses a schema written by a newer Baton, and one holding tables that are not Baton’s', async () => {
    const clock = new ManualClock(T0);
    const schema = schemas.fresh();
    await (await schemas.open(clock, schema)).close();
    await withClient((c) =>
      c.query(
        `INSERT INTO ${schema}.baton_migrations (version, name, applied_at) VALUES ($1, 'future.sql', 0)`,
        [known + 1],
      ),
    );
    await expectCode(schemas.open(clock, schema), 'STORE_INVALID');
    const foreign = schemas.fresh();
    await withClient((c) => c.query(`CREATE SCHEMA ${foreign}; CREATE TABLE ${foreign}.customers (id int)`));
    await expectCode(schemas.open(clock, foreign), 'STORE_INVALID');
    const tables = await withClient((c) =>
      c.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [foreign]),
    );
    expect(tables.rows).toEqual([{ table_name: 'customers' }]);
  });

  it('fails to open with STORE_INVALID when the server cannot be reached', async () => {
    const err = await openPostgresStore({
      connectionString: 'postgres://root:secret@127.0.0.1:1/test',
      schema: 'nowhere',
    }).catch((e: unknown) => e);
    expect(isBatonError(err) && err.code).toBe('STORE_INVALID');
    expect((err as Error).message).not.toContain('secret');
  });

  it('names its location without the password', async () => {
    const url = new URL(PG_URL);
    url.password = 'hunter2';
    const store = await openPostgresStore({ connectionString: url.toString(), schema: schemas.fresh() });
    expect(store.location).not.toContain('hunter2');
    expect(store.dialect).toBe('postgres');
    await store.close();
  });

  it('keeps stores in different schemas apart', async () => {
    const clock = new ManualClock(T0);
    const [a, b] = await Promise.all([
      schemas.open(clock, schemas.fresh()),
      schemas.open(clock, schemas.fresh()),
    ]);
    await a?.createRuns(
      [task('only-a')],
      [newEvent('only-a', 'run:created', { name: 'work', kind: 'task' })],
    );
    expect(await b?.getRun('only-a')).toBeUndefined();
    expect(await b?.readEvents({})).toEqual([]);
    await Promise.all([a?.close(), b?.close()]);
  });

  it('round-trips records exactly as the SQLite store does: key order, null, odd strings', async () => {
    const clock = new ManualClock(T0);
    const pgStore = await schemas.open(clock, schemas.fresh());
    const sqlite = openSqliteStore(':memory:', { clock });
    const input = { z: 1, a: { y: [1, 'two', null], b: 'nul \u0000 and 🎉 and "quotes" \\' } };
    const records = [];
    for (const store of [pgStore, sqlite]) {
      await store.createRuns([task('r1', { input, meta: { k: 1 } }), task('r2'), task('r3')], []);
      await store.transition('r2', { status: 'cancelled', output: null, finishedAt: T0 }, []);
      await store.transition(
        'r3',
        { status: 'cancelled', output: { b: 1, a: undefined }, meta: { m: 2 } },
        [],
      );
      records.push(await Promise.all(['r1', 'r2', 'r3'].map((id) => store.getRun(id))));
      await store.close();
    }
    const [fromPg, fromSqlite] = records;
    expect(fromPg).toStrictEqual(fromSqlite);
    expect(Object.keys(fromPg?.[0]?.input as object)).toEqual(['z', 'a']);
    expect(fromPg?.[0]?.input).toEqual(input);
  });

  it('groups the writes of one turn into few commits; a failing write rolls back alone', async () => {
    const store = await schemas.open(new ManualClock(T0), schemas.fresh());
    const seen: string[] = [];
    store.onEvents((events) => seen.push(...events.map((e) => e.runId)));
    const before = store.commitStats.commits;
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        store.createRuns(
          [task(i === 7 ? 'g3' : `g${i}`)],
          [newEvent(i === 7 ? 'g3' : `g${i}`, 'run:created', { name: 'work', kind: 'task' })],
        ),
      ),
    );
    expect(store.commitStats.commits - before).toBeLessThanOrEqual(2);
    expect(results.filter((r) => r.status === 'rejected').length).toBe(1);
    const failed = results[7] as PromiseRejectedResult;
    expect(isBatonError(failed.reason) && failed.reason.code).toBe('RUN_CONFLICT');
    expect(seen.length).toBe(39);
    const ids = (await store.readEvents({})).map((e) => e.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(ids.length).toBe(39);
    await store.close();
  });

  it('waits for queued writes on close, then refuses new ones', async () => {
    const store = await schemas.open(new ManualClock(T0), schemas.fresh());
    const writing = store.createRuns([task('late')], []);
    await store.close();
    await expect(writing).resolves.toBeUndefined();
    await expectCode(store.getRun('late'), 'STORE_CLOSED');
  });

  it('reads a checkpoint whose JSON was damaged as corrupt instead of throwing', async () => {
    const schema = schemas.fresh();
    const store = await schemas.open(new ManualClock(T0), schema);
    await store.createRuns([task('r1')], []);
    const [r] = await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] });
    await store.saveCheckpoint(
      { runId: 'r1', token: r?.leaseToken ?? 0 },
      { attempt: 1, state: { i: 1 }, record: {}, version: 1 },
      [],
    );
    await withClient((c) => c.query(`UPDATE ${schema}.checkpoints SET state = '{"i": ' WHERE run_id = 'r1'`));
    expect((await store.getLastCheckpoint('r1'))?.corrupt).toMatch(/not valid JSON/);
    await store.close();
  });
});
