import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import { T0, task } from '../store.contract.ts';
import { sqliteDriver } from './driver.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { SWEEP_SQL } from './sweep-plan.ts';
import { threadSweeper } from './sweeper.ts';
import { WriteQueue } from './write-queue.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-sweeper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store whose `n` runs expired at T0 + 1 s, its clock at T0 + 2 s. */
async function expiredStore(name: string, n: number, options: { busyTimeoutMs?: number } = {}) {
  const clock = new ManualClock(T0);
  const file = join(dir, name);
  const store = openSqliteStore(file, { clock, ...options });
  await store.createRuns(
    Array.from({ length: n }, (_, i) => task(`r${i}`)),
    [],
  );
  store.database.prepare("UPDATE runs SET status = 'succeeded', expires_at = ?").run(T0 + 1_000);
  await clock.advance(2_000);
  return { store, file, clock };
}

function remaining(file: string): string[] {
  const db = new (sqliteDriver().Database)(file, { readonly: true });
  try {
    return db.prepare('SELECT id FROM runs ORDER BY id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (isBatonError(e) ? e.code : `not a BatonError: ${String(e)}`),
  );

// A slice large enough that one sweep takes every expired run (the batch is sized to it).
const WHOLE = { sliceMs: 1_000 };

describe('the sweeper thread and close()', () => {
  it('lets sweeps called before close() finish (thread starting or behind another sweep), then closes', async () => {
    const { store, file } = await expiredStore('close-cold.db', 40);
    // The thread is still starting: the first sweep waits for it, the second for the first.
    const first = store.sweep(WHOLE);
    const second = store.sweep(WHOLE);
    const write = store.createRuns([task('late')], []);
    await store.close();
    expect(await first).toEqual({ runs: 40 });
    expect(await second).toEqual({ runs: 0 });
    await write;
    expect(remaining(file)).toEqual(['late']);
    expect(await codeOf(Promise.resolve().then(() => store.sweep()))).toBe('STORE_CLOSED');
    // Before, the second sweep posted to the closed thread and waited forever, and close() behind it.
  }, 15_000);

  it('does the same with the thread already running', async () => {
    const { store, file, clock } = await expiredStore('close-warm.db', 10);
    expect(await store.sweep(WHOLE)).toEqual({ runs: 10 });
    await store.createRuns(
      Array.from({ length: 20 }, (_, i) => task(`w${i}`)),
      [],
    );
    store.database.prepare("UPDATE runs SET status = 'succeeded', expires_at = ?").run(clock.now());
    await clock.advance(1);
    const sweeps = [store.sweep({ sliceMs: 0.01 }), store.sweep({ sliceMs: 0.01 }), store.sweep(WHOLE)];
    const writes = [store.createRuns([task('a')], []), store.createRuns([task('b')], [])];
    await store.close();
    const swept = (await Promise.all(sweeps)).reduce((sum, r) => sum + r.runs, 0);
    expect(swept).toBe(20);
    await Promise.all(writes);
    expect(remaining(file)).toEqual(['a', 'b']);
  }, 15_000);
});

describe('the sweeper thread and the WAL', () => {
  it('counts its commits for the checkpointer, so a backlog swept on the thread gets checkpoints', async () => {
    const { store } = await expiredStore('wal.db', 600);
    const before = store.commitStats.checkpoints.requested;
    // Slices too short for more than a tree or two: hundreds of sweep commits, none of the loop's.
    const slice = { sliceMs: 0.01 };
    let swept = 0;
    for (let r = await store.sweep(slice); r.runs > 0; r = await store.sweep(slice)) swept += r.runs;
    expect(swept).toBe(600);
    expect(store.commitStats.sweeps.sweeps).toBeGreaterThanOrEqual(200);
    // Before, the checkpointer heard of none of them: the WAL grew with no checkpoint at all.
    expect(store.commitStats.checkpoints.requested - before).toBeGreaterThan(0);
    await store.close();
  });
});

describe('sweeper thread failures', () => {
  it('a thread that cannot open the file fails the sweep as STORE_UNAVAILABLE, holds no write, and the next sweep starts a new one', async () => {
    const { store, file } = await expiredStore('moved.db', 5);
    renameSync(file, `${file}.away`);
    expect(await codeOf(store.sweep(WHOLE))).toBe('STORE_UNAVAILABLE');
    renameSync(`${file}.away`, file);
    await store.createRuns([task('after')], []);
    expect(await store.sweep(WHOLE)).toEqual({ runs: 5 });
    await store.close();
    expect(remaining(file)).toEqual(['after']);
  });

  it("another connection's write lock fails the sweep after the store's busy timeout, as STORE_UNAVAILABLE, and its writes go on after", async () => {
    const { store, file } = await expiredStore('busy.db', 5, { busyTimeoutMs: 50 });
    const other = new (sqliteDriver().Database)(file);
    other.prepare('BEGIN IMMEDIATE').run();
    const sweep = store.sweep(WHOLE);
    // Issued while the sweep waits for the lock: held, then it meets the lock itself.
    const write = codeOf(store.createRuns([task('during')], []));
    expect(await codeOf(sweep)).toBe('STORE_UNAVAILABLE');
    expect(await write).toBe('STORE_UNAVAILABLE');
    other.prepare('COMMIT').run();
    other.close();
    await store.createRuns([task('after')], []);
    expect(await store.sweep(WHOLE)).toEqual({ runs: 5 });
    await store.close();
    expect(remaining(file)).toEqual(['after']);
  });

  it('a thread that dies in a sweep fails it and the sweep waiting behind it as STORE_UNAVAILABLE, releases the writes, and the next sweep starts a new thread', async () => {
    // The real schema and data, swept by a thread whose driver ends it at a marker file.
    const { store, file } = await expiredStore('dies.db', 12);
    await store.close();
    const { Database } = sqliteDriver();
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE IF NOT EXISTS t (v INTEGER)');
    const queue = new WriteQueue(db, () => {});
    const sweeper = threadSweeper(
      resolve(import.meta.dirname, '../../../test/fixtures/dying-sqlite-driver.cjs'),
      file,
      (work) => queue.holdWrites(work),
      () => 0,
      1_000,
    );
    const plan = { now: T0 + 2_000, batch: 4_096, vacuum: false };
    writeFileSync(`${file}.die`, '');
    const dying = sweeper.sweep(plan);
    const behind = sweeper.sweep(plan);
    const write = queue.run(() => db.prepare('INSERT INTO t (v) VALUES (1)').run());
    expect(await codeOf(dying)).toBe('STORE_UNAVAILABLE');
    expect(await codeOf(behind)).toBe('STORE_UNAVAILABLE');
    await write;
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(1);
    // The next sweep starts a new thread and deletes the runs; nothing of the dead one's was kept.
    expect(db.prepare(`${SWEEP_SQL.anyExpired}`).get(T0 + 2_000)).toBeDefined();
    expect(await sweeper.sweep(plan)).toMatchObject({ runs: 12 });
    await sweeper.close();
    expect(await codeOf(sweeper.sweep(plan))).toBe('STORE_CLOSED');
    await queue.drain();
    db.close();
    expect(remaining(file)).toEqual([]);
  });
});
