import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { walCheckpointer } from './checkpointer.ts';
import { sqliteDriver } from './driver.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { WriteQueue } from './write-queue.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-ckpt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The WAL header's checkpoint sequence number: it goes up each time the WAL starts over. */
function walResets(file: string): number {
  const fd = openSync(`${file}-wal`, 'r');
  try {
    const head = Buffer.alloc(16);
    readSync(fd, head, 0, 16, 0);
    return head.readUInt32BE(12);
  } finally {
    closeSync(fd);
  }
}

describe('checkpoints off the event loop', () => {
  it('copies the WAL from a thread while writes go on, and holds writes to catch up so the WAL starts over', async () => {
    const file = join(dir, 'steady.db');
    const { Database, resolved } = sqliteDriver();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v TEXT NOT NULL)');
    let queue: WriteQueue | undefined;
    const checkpointer = walCheckpointer(db, resolved, file, (until) => queue?.pauseUntil(until), {
      everyCommits: 10,
      catchUpFrames: 50,
    });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    queue = new WriteQueue(db, () => {}, { afterCommit: () => checkpointer.committed() });
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    // One commit per turn, without a pause: the thread's checkpoints fall behind and must catch up.
    // The thread takes a moment to start; then a few hundred commits more.
    let commits = 0;
    const write = () => queue?.run(() => insert.run('x'.repeat(3_000)));
    while (commits < 50_000 && checkpointer.stats.held === 0) {
      await write();
      commits++;
    }
    // From there on, the WAL starts over again and again instead of growing. Counted in restarts,
    // not in bytes or a fixed number of commits: how much is written during one checkpoint depends
    // on the machine's load (a bound in bytes failed at load 10), while a WAL that never started
    // over would show no restart in 50,000 commits at all.
    const resetsBefore = walResets(file);
    while (commits < 100_000 && walResets(file) < resetsBefore + 3) {
      await write();
      commits++;
    }
    await queue.drain();
    await checkpointer.close();
    expect(checkpointer.stats.offLoop).toBeGreaterThan(0);
    expect(checkpointer.stats.held).toBeGreaterThan(0);
    expect(walResets(file)).toBeGreaterThanOrEqual(resetsBefore + 3);
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(commits);
    db.close();
  });

  it("closes the thread's connection first, so the store's close folds the WAL in", async () => {
    const file = join(dir, 'store.db');
    const store = openSqliteStore(file, { synchronous: 'NORMAL' });
    const run = (id: string) => ({
      id,
      kind: 'task' as const,
      name: 'w',
      input: {},
      status: 'queued' as const,
    });
    for (let i = 0; i < 400; i++) await store.createRuns([run(`r${i}`)], []);
    for (let i = 0; i < 500 && store.commitStats.checkpoints.offLoop === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(store.commitStats.checkpoints.offLoop).toBeGreaterThan(0);
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const again = openSqliteStore(file);
    expect((await again.countRuns()).queued).toBe(400);
    await again.close();
  });

  it('starts no thread for a store that commits little, and then closes at once', () => {
    const store = openSqliteStore(join(dir, 'quiet.db'));
    void store.close();
    expect(store.database.open).toBe(false);
  });
});
