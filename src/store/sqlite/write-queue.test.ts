import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatonEvent } from '../../core/index.ts';
import { sqliteDriver } from './driver.ts';
import { type DurableSync, walSync } from './wal-sync.ts';
import { WriteQueue } from './write-queue.ts';

const { Database } = sqliteDriver();

const dir = mkdtempSync(join(tmpdir(), 'baton-wq-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openQueue(
  sliceMs: number,
  untilNextTimer = () => Number.POSITIVE_INFINITY,
  durable?: (db: InstanceType<typeof Database>) => DurableSync,
) {
  const db = new Database(join(dir, `q${n++}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const published: number[] = [];
  const queue = new WriteQueue(db, (events) => published.push(...events.map((e) => e.id)), {
    sliceMs,
    untilNextTimer,
    ...(durable ? { durable: durable(db) } : {}),
  });
  const write = (v: number) =>
    queue.run((scope) => {
      scope.events.push({ id: v } as BatonEvent);
      return insert.run(v).changes;
    });
  const rows = () => db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all();
  return { db, queue, write, published, rows };
}

/** A sync the test finishes by hand: `syncs[i].done()` ends the i-th fdatasync. */
function manualSync() {
  const syncs: Array<{ done: () => void; fail: (e: Error) => void }> = [];
  const durable: DurableSync = {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        syncs.push({ done: resolve, fail: reject });
      }),
    close: () => {},
  };
  return { syncs, durable };
}

/** Lets setImmediate-scheduled flushes and promise callbacks run. */
const turn = () => new Promise<void>((r) => setImmediate(r));

function track<T>(p: Promise<T>) {
  const state = { settled: false as boolean, value: undefined as T | undefined };
  p.then(
    (v) => {
      state.settled = true;
      state.value = v;
    },
    () => {
      state.settled = true;
    },
  );
  return state;
}

describe('WriteQueue', () => {
  it('commits the writes of one turn together', async () => {
    const { db, queue, write } = openQueue(1_000);
    await Promise.all(Array.from({ length: 50 }, (_, i) => write(i)));
    expect(queue.commits).toBe(1);
    expect(queue.maxBatch).toBe(50);
    db.close();
  });

  it('yields between commits while a timer is due, keeping order and losing nothing', async () => {
    const { db, queue, write } = openQueue(1_000, () => 0);
    await Promise.all(Array.from({ length: 5 }, (_, i) => write(i)));
    expect(queue.commits).toBe(5);
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([0, 1, 2, 3, 4]);
    db.close();
  });

  it('rolls back a failing write alone', async () => {
    const { db, queue } = openQueue(1_000);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const results = await Promise.allSettled([
      queue.run(() => insert.run(1)),
      queue.run(() => insert.run(null)),
      queue.run(() => insert.run(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([1, 3]);
    db.close();
  });

  it('commits everything still queued on drain and waits for its sync', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write } = openQueue(0, undefined, () => durable);
    const pending = Array.from({ length: 10 }, (_, i) => write(i));
    const drained = track(queue.drain());
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(10);
    await turn();
    expect(drained.settled).toBe(false);
    // The ten single-write slices committed one by one: the first sync started after the first
    // commit, the next one covers the other nine.
    expect(queue.commits).toBe(10);
    expect(syncs).toHaveLength(1);
    syncs[0]?.done();
    await turn();
    expect(syncs).toHaveLength(2);
    expect(drained.settled).toBe(false);
    syncs[1]?.done();
    await Promise.all(pending);
    await turn();
    expect(drained.settled).toBe(true);
    expect(queue.idle).toBe(true);
    db.close();
  });

  it('acknowledges a commit and publishes its events only after a sync started after it', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write, published, rows } = openQueue(1_000, undefined, () => durable);
    const a = track(write(1));
    await turn();
    // Committed (visible to this connection) but not yet durable: not acknowledged.
    expect(rows()).toEqual([1]);
    expect(syncs).toHaveLength(1);
    expect(a.settled).toBe(false);
    expect(published).toEqual([]);
    expect(queue.firstUnsyncedEventId()).toBe(1);
    // Two more batches commit while that sync is in flight…
    const b = track(write(2));
    await turn();
    const c = track(write(3));
    await turn();
    expect(rows()).toEqual([1, 2, 3]);
    expect(queue.commits).toBe(3);
    // …and the sync that was in flight does not acknowledge them: it may have started before them.
    syncs[0]?.done();
    await turn();
    expect(a).toMatchObject({ settled: true, value: 1 });
    expect(b.settled).toBe(false);
    expect(c.settled).toBe(false);
    expect(published).toEqual([1]);
    expect(queue.firstUnsyncedEventId()).toBe(2);
    // One next sync covers both.
    expect(syncs).toHaveLength(2);
    syncs[1]?.done();
    await turn();
    expect(b.settled && c.settled).toBe(true);
    expect(published).toEqual([1, 2, 3]);
    expect(queue.firstUnsyncedEventId()).toBeUndefined();
    expect(queue.syncs).toBe(2);
    db.close();
  });

  it('lets a read wait until every commit it may have seen is durable', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write } = openQueue(1_000, undefined, () => durable);
    await expect(Promise.race([queue.synced(), 'waits'])).resolves.toBeUndefined();
    void write(1);
    await turn();
    const first = track(queue.synced());
    void write(2);
    await turn();
    const second = track(queue.synced());
    syncs[0]?.done();
    await turn();
    expect(first.settled).toBe(true);
    expect(second.settled).toBe(false);
    syncs[1]?.done();
    await turn();
    expect(second.settled).toBe(true);
    db.close();
  });

  it('answers a failing write after the syncs of the commits before it, in order', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write } = openQueue(1_000, undefined, () => durable);
    const order: string[] = [];
    const a = write(1).then(() => order.push('a'));
    await turn();
    const bad = queue
      .run(() => db.prepare('INSERT INTO t (v) VALUES (NULL)').run())
      .catch(() => order.push('bad'));
    await turn();
    syncs[0]?.done();
    await turn();
    syncs[1]?.done();
    await Promise.all([a, bad]);
    expect(order).toEqual(['a', 'bad']);
    db.close();
  });

  it('answers an atCommit write at its COMMIT once the commits before it are durable, its events after its own sync', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write, published } = openQueue(1_000, undefined, () => durable);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const claim = (v: number) =>
      queue.run(
        (scope) => {
          scope.events.push({ id: v } as BatonEvent);
          return insert.run(v).changes;
        },
        { atCommit: true },
      );
    // Nothing earlier waits for a sync: answered at its commit, before that commit's sync ends.
    const a = track(claim(1));
    const plain = track(write(2));
    await turn();
    expect(syncs).toHaveLength(1);
    expect(a).toMatchObject({ settled: true, value: 1 });
    expect(plain.settled).toBe(false);
    // Its events still wait for the sync, with its batch's.
    expect(published).toEqual([]);
    // A later one commits while that sync runs: it waits for it (what it read may rest on it)…
    const b = track(claim(3));
    await turn();
    expect(queue.commits).toBe(2);
    expect(b.settled).toBe(false);
    syncs[0]?.done();
    await turn();
    // …but not for the sync of its own commit.
    expect(b).toMatchObject({ settled: true, value: 1 });
    expect(plain.settled).toBe(true);
    expect(published).toEqual([1, 2]);
    syncs[1]?.done();
    await turn();
    expect(published).toEqual([1, 2, 3]);
    db.close();
  });

  it('fails an atCommit write waiting for an earlier sync when that sync fails', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write } = openQueue(1_000, undefined, () => durable);
    const a = write(1);
    await turn();
    const b = queue.run(() => db.prepare('INSERT INTO t (v) VALUES (2)').run().changes, { atCommit: true });
    await turn();
    syncs[0]?.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    for (const p of [a, b]) await expect(p).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    db.close();
  });

  it('rolls back a failing atomic write (one changing statement, no savepoint) alone', async () => {
    const { db, queue, write, rows } = openQueue(1_000);
    const a = write(1);
    const bad = queue.run(() => db.prepare('INSERT INTO t (v) VALUES (2), (NULL)').run(), { atomic: true });
    const c = write(3);
    await expect(bad).rejects.toThrow(/NOT NULL/);
    await Promise.all([a, c]);
    expect(queue.commits).toBe(1);
    expect(rows()).toEqual([1, 3]);
    db.close();
  });

  it('acknowledges nothing more once a sync fails', async () => {
    const { syncs, durable } = manualSync();
    const { db, write, published } = openQueue(1_000, undefined, () => durable);
    const a = write(1);
    await turn();
    const b = write(2);
    await turn();
    syncs[0]?.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    for (const p of [a, b])
      await expect(p).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', message: /could not be synced/ });
    await expect(write(3)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(published).toEqual([]);
    db.close();
  });

  it('syncs the real WAL file before acknowledging', async () => {
    const { db, queue, write, rows } = openQueue(1_000, undefined, walSync);
    await Promise.all([write(1), write(2)]);
    await write(3);
    expect(rows()).toEqual([1, 2, 3]);
    expect(queue.syncs).toBe(2);
    await queue.drain();
    db.close();
  });

  it('fails every write of a batch with SQLITE_FULL when a full disk rolls the transaction back', async () => {
    const { db, queue } = openQueue(1_000);
    db.exec('CREATE TABLE b (v BLOB); CREATE INDEX b_v ON b (v)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const blob = db.prepare('INSERT INTO b VALUES (randomblob(900))');
    // The file may not grow: SQLite's full disk. Here it rolls back the whole transaction,
    // savepoints included: every write of that batch must fail with that cause.
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
    const results = await Promise.allSettled([
      queue.run(() => insert.run(1)),
      queue.run(() => {
        for (let i = 0; i < 30; i++) blob.run();
      }),
      queue.run(() => insert.run(3)),
    ]);
    // The write before the failing one was rolled back with it; the one after went in the next batch.
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    for (const r of results.slice(0, 2))
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_FULL' });
    expect(db.inTransaction).toBe(false);
    expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual([3]);
    // The queue goes on: once there is room again, writes commit.
    db.pragma('max_page_count = 1073741823');
    await queue.run(() => insert.run(4));
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual([3, 4]);
    db.close();
  });
});

describe('the COMMIT time a write is told (a sweep sizes its next batches by it)', () => {
  it('tells each write that asked how long the COMMIT that took it held the loop, and no write that failed', async () => {
    const db = new Database(join(dir, `q${n++}.db`));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    // A monotonic clock that moves 2 ms at every read: the COMMIT, read around, "takes" 2 ms.
    let ms = 0;
    const queue = new WriteQueue(db, () => {}, { monotonic: () => (ms += 2) });
    const told: Array<[string, number]> = [];
    const write = (name: string, fail = false) =>
      queue.run((scope) => {
        scope.onCommit = (commitMs) => told.push([name, commitMs]);
        if (fail) throw new Error('no');
        db.prepare('INSERT INTO t (v) VALUES (1)').run();
      });
    const results = await Promise.allSettled([write('a'), write('b', true), write('c')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(told).toEqual([
      ['a', 2],
      ['c', 2],
    ]);
    db.close();
  });
});

describe('how long transactions held the event loop', () => {
  it('records the last and longest hold, BEGIN to COMMIT or ROLLBACK, and counts holds past the slice', async () => {
    const db = new Database(join(dir, `q${n++}.db`));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    // The clock moves only when a write says how long it works.
    let ms = 0;
    const queue = new WriteQueue(db, () => {}, { sliceMs: 4, monotonic: () => ms });
    const write = (workMs: number, fail = false) =>
      queue.run(() => {
        ms += workMs;
        if (fail) throw new Error('no');
        db.prepare('INSERT INTO t (v) VALUES (1)').run();
      });
    expect(queue.holds).toEqual({ lastMs: 0, maxMs: 0, overSlice: 0 });
    await write(7);
    expect(queue.holds).toEqual({ lastMs: 7, maxMs: 7, overSlice: 1 });
    await write(1);
    expect(queue.holds).toEqual({ lastMs: 1, maxMs: 7, overSlice: 1 });
    // A write that fails alone is rolled back: its transaction held the loop all the same.
    await expect(write(9, true)).rejects.toThrow('no');
    expect(queue.holds).toEqual({ lastMs: 9, maxMs: 9, overSlice: 2 });
    // Two writes of one turn share one transaction: one hold of both.
    await Promise.all([write(2), write(3)]);
    expect(queue.holds).toEqual({ lastMs: 5, maxMs: 9, overSlice: 3 });
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(4);
    db.close();
  });

  it("holds its writes while another connection's work runs, and until every overlapping pause ends", async () => {
    const { db, queue, write, rows } = openQueue(1_000);
    await write(1);
    // A checkpoint catching up holds the writes; a sweep asks to hold them too.
    let endCheckpoint = () => {};
    queue.pauseUntil(
      new Promise<void>((r) => {
        endCheckpoint = r;
      }),
    );
    let endSweep = () => {};
    let sweepStarted = false;
    const sweep = queue.holdWrites(async () => {
      sweepStarted = true;
      await new Promise<void>((r) => {
        endSweep = r;
      });
      return 'swept';
    });
    const queued = track(write(2));
    await turn();
    // The sweep waits for the checkpoint's pause before it starts; the write waits for both.
    expect(sweepStarted).toBe(false);
    endCheckpoint();
    await turn();
    await turn();
    expect(sweepStarted).toBe(true);
    expect(queued.settled).toBe(false);
    expect(rows()).toEqual([1]);
    // The event loop is free meanwhile: turns go by, the write stays queued.
    for (let i = 0; i < 5; i++) await turn();
    expect(queued.settled).toBe(false);
    // A catch-up that begins while the sweep runs and ends before it leaves the writes held.
    let endCatchUp = () => {};
    queue.pauseUntil(
      new Promise<void>((r) => {
        endCatchUp = r;
      }),
    );
    endCatchUp();
    for (let i = 0; i < 5; i++) await turn();
    expect(queued.settled).toBe(false);
    expect(rows()).toEqual([1]);
    endSweep();
    expect(await sweep).toBe('swept');
    for (let i = 0; i < 5 && !queued.settled; i++) await turn();
    expect(queued.settled).toBe(true);
    expect(rows()).toEqual([1, 2]);
    db.close();
  });

  it('releases the writes when the held work fails', async () => {
    const { db, queue, write, rows } = openQueue(1_000);
    await expect(queue.holdWrites(() => Promise.reject(new Error('thread gone')))).rejects.toThrow(
      'thread gone',
    );
    await write(3);
    expect(rows()).toEqual([3]);
    db.close();
  });

  it('releases the callers of a synced group a slice a turn, in commit order, events first', async () => {
    const { syncs, durable } = manualSync();
    let ms = 0;
    const db = new Database(join(dir, `q${n++}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
    const published: number[] = [];
    const queue = new WriteQueue(db, (events) => published.push(...events.map((e) => e.id)), {
      sliceMs: 2,
      untilNextTimer: () => Number.POSITIVE_INFINITY,
      monotonic: () => ms,
      durable,
    });
    const told: number[] = [];
    // Each caller's continuation costs 1 ms of the queue's clock, as a run's next step would.
    const writes = [1, 2, 3, 4, 5].map((v) =>
      queue
        .run((scope) => {
          scope.events.push({ id: v } as BatonEvent);
          return db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
        })
        .then(() => {
          ms += 1;
          told.push(v);
        }),
    );
    await turn();
    expect(syncs).toHaveLength(1);
    expect(queue.idle).toBe(false);
    syncs[0]?.done();
    // Microtasks only, no turn of the loop.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    // The events went out first, then callers until the 2 ms slice was spent; the rest wait a turn.
    expect(published).toEqual([1, 2, 3, 4, 5]);
    expect(told.length).toBeGreaterThan(0);
    expect(told.length).toBeLessThan(5);
    expect(queue.idle).toBe(false);
    await Promise.all(writes);
    expect(told).toEqual([1, 2, 3, 4, 5]);
    expect(queue.idle).toBe(true);
    db.close();
  });

  it('syncs nothing for a transaction that changed no row, and answers it after the commits before it', async () => {
    const { syncs, durable } = manualSync();
    const { db, queue, write, rows } = openQueue(1_000, undefined, () => durable);
    const look = () => queue.run(() => db.prepare('SELECT count(*) FROM t').pluck().get() as number);
    // Nothing unsynced before it: answered at once, with no fdatasync (an idle worker's poll).
    expect(await look()).toBe(0);
    expect(syncs).toHaveLength(0);
    // A write, then a look that saw it: the look waits for the write's sync, and adds none.
    const a = track(write(1));
    await turn();
    const b = track(look());
    await turn();
    expect(rows()).toEqual([1]);
    expect(syncs).toHaveLength(1);
    expect(b.settled).toBe(false);
    syncs[0]?.done();
    await turn();
    expect(a).toMatchObject({ settled: true, value: 1 });
    expect(b).toMatchObject({ settled: true, value: 1 });
    expect(syncs).toHaveLength(1);
    expect(queue.syncs).toBe(1);
    // The next write that changes a row is synced as before.
    const c = track(write(2));
    await turn();
    expect(syncs).toHaveLength(2);
    syncs[1]?.done();
    await turn();
    expect(c.settled).toBe(true);
    db.close();
  });
});
