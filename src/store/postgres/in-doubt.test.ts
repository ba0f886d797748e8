/**
 * A write batch's first try ends in one message (its statements, COMMIT, the hints), so a lost
 * connection can leave that whole message in doubt. The transaction id read with its BEGIN settles
 * it on another connection: aborted, the writes run again; committed, they are kept and fail as
 * STORE_UNAVAILABLE saying so (their answers were lost), never run twice; still running (the
 * session outlived the socket), its backend is ended first. Real server; a proxy cuts sockets at
 * the moments that matter, pg_terminate_backend ends sessions.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { BatonError, isBatonError } from '../../core/index.ts';
import { describePostgres, PG_URL, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { PgWriteQueue, type WriteQueueHooks } from './write-queue.ts';

const schemas = testSchemas();
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** COMMIT's CommandComplete message: 'C', length 11, "COMMIT\0". */
const COMMIT_COMPLETE = Buffer.from('C\x00\x00\x00\x0bCOMMIT\x00', 'latin1');

/** A TCP proxy to the test server that can drop every connection, or the first answer to a COMMIT. */
async function cuttingProxy() {
  const target = new URL(PG_URL);
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let cutAtCommit = false;
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    const pair = { client, server };
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      server.destroy();
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    server.on('error', drop).on('close', drop);
    client.on('data', (chunk) => server.write(chunk));
    server.on('data', (chunk: Buffer) => {
      const at = cutAtCommit ? chunk.indexOf(COMMIT_COMPLETE) : -1;
      if (at < 0) {
        client.write(chunk);
        return;
      }
      // The server has committed; the client gets everything before that answer, then a dead socket.
      cutAtCommit = false;
      client.write(chunk.subarray(0, at), drop);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(PG_URL);
  url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  closers.push(async () => {
    for (const p of pairs) p.client.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  });
  return {
    url: url.toString(),
    armCommitCut: () => {
      cutAtCommit = true;
    },
    cutAll: () => {
      for (const p of pairs) {
        p.client.destroy();
        p.server.destroy();
      }
    },
  };
}

function queueOn(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => {});
  closers.push(() => pool.end());
  const hooks: WriteQueueHooks = {
    flushEvents: async () => undefined,
    wakeChannels: () => [],
    commitHint: () => undefined,
    publish: () => {},
    sleep: async () => {},
    unavailable: (cause, committing) =>
      new BatonError('STORE_UNAVAILABLE', committing === 'kept' ? 'kept' : 'unavailable', { cause }),
  };
  return new PgWriteQueue(pool, hooks);
}

/** A table, and a session holding the key `n` uncommitted: a batch inserting it waits on that. */
async function tableWithHeldKey(n: number) {
  const schema = schemas.fresh();
  await withClient((c) => c.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int PRIMARY KEY)`));
  const holder = new pg.Client({ connectionString: PG_URL });
  await holder.connect();
  closers.push(() => holder.end());
  await holder.query(`BEGIN; INSERT INTO ${schema}.t (n) VALUES (${n})`);
  return { schema, release: () => holder.query('ROLLBACK') };
}

/** Waits until a session (not the holder) is blocked on a lock, and returns its pid. */
async function blockedSession(schema: string): Promise<number> {
  for (;;) {
    const rows = await withClient((c) =>
      c.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%${schema}.t%`],
      ),
    );
    const [row] = rows.rows;
    if (row) return row.pid;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function rowsOf(schema: string): Promise<number[]> {
  const { rows } = await withClient((c) => c.query<{ n: number }>(`SELECT n FROM ${schema}.t ORDER BY n`));
  return rows.map((r) => r.n);
}

describePostgres('Postgres write batches: a last message lost in doubt', () => {
  it('runs the batch again when its session was terminated before COMMIT (settled: aborted)', async () => {
    const { schema, release } = await tableWithHeldKey(1);
    const queue = queueOn(PG_URL);
    let runs = 0;
    const write = queue.run(async (tx) => {
      runs++;
      // Kept: BEGIN, the transaction id, this INSERT and COMMIT are one message, which waits here.
      await tx.later(`INSERT INTO ${schema}.t (n) VALUES (1)`);
      return 'one';
    });
    const pid = await blockedSession(schema);
    await withClient((c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
    await release();
    expect(await write).toBe('one');
    expect(runs).toBe(2);
    expect(await rowsOf(schema)).toEqual([1]);
    expect(queue.settled).toEqual({ committed: 0, aborted: 1, unknown: 0 });
    expect(queue.reconnects).toBe(1);
  });

  it('never runs a batch again whose COMMIT succeeded but whose answer was lost (settled: committed)', async () => {
    const schema = schemas.fresh();
    await withClient((c) => c.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (n int PRIMARY KEY)`));
    const proxy = await cuttingProxy();
    const queue = queueOn(proxy.url);
    await queue.run(async (tx) => tx.later(`INSERT INTO ${schema}.t (n) VALUES (1)`));
    proxy.armCommitCut();
    let runs = 0;
    const err = await queue
      .run(async (tx) => {
        runs++;
        await tx.later(`INSERT INTO ${schema}.t (n) VALUES (2)`);
      })
      .catch((e: unknown) => e);
    expect(isBatonError(err, 'STORE_UNAVAILABLE')).toBe(true);
    expect((err as Error).message).toBe('kept');
    expect(runs).toBe(1);
    expect(await rowsOf(schema)).toEqual([1, 2]);
    expect(queue.settled).toEqual({ committed: 1, aborted: 0, unknown: 0 });
    // The queue goes on.
    await queue.run(async (tx) => tx.later(`INSERT INTO ${schema}.t (n) VALUES (3)`));
    expect(await rowsOf(schema)).toEqual([1, 2, 3]);
  });

  it('ends a session that outlived its socket before asking again (settled: aborted)', async () => {
    const { schema, release } = await tableWithHeldKey(3);
    const proxy = await cuttingProxy();
    const queue = queueOn(proxy.url);
    let runs = 0;
    const write = queue.run(async (tx) => {
      runs++;
      // A round trip first (BEGIN and the transaction id answer with it), then the kept INSERT
      // goes with COMMIT and waits on the held key.
      await tx.select('SELECT 1');
      await tx.later(`INSERT INTO ${schema}.t (n) VALUES (3)`);
      return 'three';
    });
    await blockedSession(schema);
    proxy.cutAll();
    // The queue finds the transaction still running and ends that session (left running, it would
    // stay 'in progress' until the key is released, and the write would fail as in doubt); then it
    // runs the batch again, which waits on the key until it is released.
    while (queue.settled.aborted === 0) await new Promise((resolve) => setImmediate(resolve));
    await release();
    expect(await write).toBe('three');
    expect(runs).toBe(2);
    expect(await rowsOf(schema)).toEqual([3]);
    expect(queue.settled).toEqual({ committed: 0, aborted: 1, unknown: 0 });
  });
});
