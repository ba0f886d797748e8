/**
 * A heartbeat that would hang fails within a third of its lease and leaves nothing behind: on a row
 * lock the server cancels it (lock_timeout), so it neither keeps a connection nor commits once the
 * lock goes; on a socket that no longer answers the pool ends that connection rather than lending it
 * again. The worker's side (attempts stopped before their leases end) is in worker-postgres.test.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { systemClock } from '../../time/index.ts';
import { describePostgres, PG_URL, testSchemas } from './fixtures/pg-test-server.ts';
import { openPostgresStore, type PostgresStore } from './index.ts';
import { PollReads } from './poll-reads.ts';

const schemas = testSchemas();
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

const LEASE_MS = 1_500;

async function openWith(schema: string, pool: pg.Pool): Promise<PostgresStore> {
  const store = await openPostgresStore({ pool, schema, clock: systemClock, wakeups: 'poll' });
  closers.push(() => store.close());
  await store.registerWorker({
    id: 'w1',
    host: 'h',
    pid: 1,
    processStart: null,
    startedAt: systemClock.now(),
    heartbeatAt: systemClock.now(),
  });
  return store;
}

/** A TCP relay to the test server that can stop passing bytes either way (a black hole). */
async function relay(): Promise<{ port: number; hole: (on: boolean) => void }> {
  const target = new URL(PG_URL);
  let holed = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    down.on('data', (b) => holed || up.write(b));
    up.on('data', (b) => holed || down.write(b));
    down.on('end', () => up.end());
    up.on('end', () => down.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return { port: (server.address() as net.AddressInfo).port, hole: (on) => (holed = on) };
}

/** A pool whose connections go through a relay that can black-hole. */
async function relayedPool(): Promise<{ pool: pg.Pool; hole: (on: boolean) => void }> {
  const { port, hole } = await relay();
  const url = new URL(PG_URL);
  url.host = `127.0.0.1:${port}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  pool.on('error', () => {});
  closers.push(() => pool.end());
  return { pool, hole };
}

describePostgres('a heartbeat that would hang', () => {
  it('on a row lock fails, and the server has given up its statement', async () => {
    const schema = schemas.fresh();
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    closers.push(() => pool.end());
    const store = await openWith(schema, pool);
    const blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
    closers.push(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query(`SELECT id FROM ${pg.escapeIdentifier(schema)}.workers FOR UPDATE`);

    // A lease of 4.5 s: the beat's bound is 1.5 s, the server's wait for the lock 1.2 s.
    await expect(store.heartbeat('w1', 4_500, [])).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('waited 1200 ms for its worker row'),
    });
    // Before, the beat failed on the client only: its statement still waited for the lock, holding
    // a connection of the pool, and committed its stale heartbeat once the lock went.
    const { rows } = await blocker.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%heartbeat_at%'`,
      [schema],
    );
    expect(rows[0]?.n).toBe(0);
    await blocker.query('ROLLBACK');
    expect(await store.heartbeat('w1', LEASE_MS, [])).toEqual([]);
  });

  it('on a socket that no longer answers fails, and the pool ends that connection', async () => {
    const schema = schemas.fresh();
    const { pool, hole } = await relayedPool();
    const store = await openWith(schema, pool);
    const dropped = new Promise<unknown>((resolve) => {
      pool.on('release', (err: unknown) => {
        if (err) resolve(err);
      });
    });

    hole(true);
    await expect(store.heartbeat('w1', LEASE_MS, [])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // Before, the connection stayed lent to the unanswered statement for good (this never came).
    expect(await dropped).toMatchObject({ message: 'Query read timeout' });
    hole(false);
    // The pool opens another connection, and the store carries on.
    expect(await store.heartbeat('w1', LEASE_MS, [])).toEqual([]);
  });

  it('shares its message with other poll statements: unanswered, they all fail and none is sent again', async () => {
    const { pool, hole } = await relayedPool();
    const reads = new PollReads(pool);
    await reads.read('SELECT 1', []);

    hole(true);
    // The heartbeat's limit rides on the message, a claim beside it. The server may have run both:
    // before, each was sent again alone, the claim through the hole with no limit, and it never settled.
    const [beat, claim] = await Promise.allSettled([
      reads.read('SELECT 2 AS beat', [], 300),
      reads.read('SELECT 3 AS claim', []),
    ]);
    expect(reads.stats.messages).toBe(2);
    expect(beat).toMatchObject({ status: 'rejected', reason: { message: 'Query read timeout' } });
    expect(claim).toMatchObject({ status: 'rejected', reason: { message: 'Query read timeout' } });
    hole(false);
    expect(await reads.read('SELECT 4 AS n', [], 300)).toEqual([{ n: 4 }]);
  });
});
