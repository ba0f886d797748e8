/**
 * The write queue when its connection is lost: a batch cut before COMMIT runs again, in order, on
 * a new connection; a server that stays unreachable fails the write as STORE_UNAVAILABLE after
 * UNAVAILABLE_AFTER_MS of backoff, never with an error that ends the process, and no backoff is
 * longer than RECONNECT_MAX_MS (writes resume that soon after the server is back).
 */
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { BatonError, isBatonError } from '../../core/index.ts';
import { describePostgres, PG_URL, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { PgWriteQueue, RECONNECT_MAX_MS, UNAVAILABLE_AFTER_MS, type WriteQueueHooks } from './write-queue.ts';

const schemas = testSchemas();
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

function queueOn(url: string, sleeps: number[] = []) {
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => {});
  pools.push(pool);
  const hooks: WriteQueueHooks = {
    flushEvents: async () => undefined,
    wakeChannels: () => [],
    commitHint: () => undefined,
    publish: () => {},
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    unavailable: (cause) => new BatonError('STORE_UNAVAILABLE', 'unavailable', { cause }),
  };
  return new PgWriteQueue(pool, hooks);
}

describePostgres('Postgres write queue on a lost connection', () => {
  it('runs a batch whose session was terminated before COMMIT again, in order, once', async () => {
    const schema = schemas.fresh();
    await withClient((c) => c.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int, seq serial)`));
    const sleeps: number[] = [];
    const queue = queueOn(PG_URL, sleeps);
    let cut = false;
    const first = queue.run(async (tx) => {
      await tx.execute(`INSERT INTO ${schema}.t (n) VALUES (1)`);
      if (!cut) {
        cut = true;
        // What pg_terminate_backend from an operator (or a restart) does to a session mid-batch.
        await tx.select('SELECT pg_terminate_backend(pg_backend_pid())');
      }
      return 'one';
    });
    const second = queue.run(async (tx) => {
      await tx.execute(`INSERT INTO ${schema}.t (n) VALUES (2)`);
      return 'two';
    });
    expect(await Promise.all([first, second])).toEqual(['one', 'two']);
    const rows = await withClient((c) => c.query(`SELECT n FROM ${schema}.t ORDER BY seq`));
    expect(rows.rows.map((r) => r.n)).toEqual([1, 2]);
    expect(queue.reconnects).toBe(1);
    expect(sleeps).toEqual([200]);
    expect(queue.commits).toBe(1);
  });

  it('fails a write as STORE_UNAVAILABLE once the server stayed unreachable through every backoff', async () => {
    const sleeps: number[] = [];
    const queue = queueOn('postgres://root@127.0.0.1:1/test', sleeps);
    const err = await queue.run(async () => 'never').catch((e: unknown) => e);
    expect(isBatonError(err, 'STORE_UNAVAILABLE')).toBe(true);
    // Doubling from 200 ms to at most half a second: after a restart the next try is that soon.
    expect(sleeps).toEqual([200, 400, ...Array.from({ length: 11 }, () => 500)]);
    expect(Math.max(...sleeps)).toBe(RECONNECT_MAX_MS);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(UNAVAILABLE_AFTER_MS);
    // The queue keeps working once the server answers: nothing is left queued or stuck.
    await queue.idle();
  });
});
