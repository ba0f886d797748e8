import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from './driver.ts';
import { WriteQueue } from './write-queue.ts';

const { Database } = sqliteDriver();

const dir = mkdtempSync(join(tmpdir(), 'baton-wq-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openQueue(sliceMs: number, untilNextTimer = () => Number.POSITIVE_INFINITY) {
  const db = new Database(join(dir, `q${n++}.db`));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const queue = new WriteQueue(db, () => {}, sliceMs, untilNextTimer);
  const write = (v: number) => queue.run(() => insert.run(v).changes);
  return { db, queue, write };
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

  it('commits everything still queued on flushAll', () => {
    const { db, queue, write } = openQueue(0);
    const pending = Array.from({ length: 10 }, (_, i) => write(i));
    queue.flushAll();
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(10);
    db.close();
    return Promise.all(pending);
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
