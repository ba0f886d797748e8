import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isBatonError, newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import { runStoreContract, T0, task } from '../store.contract.ts';
import { runStoreDeliveryContract } from '../store-deliveries.contract.ts';
import { runStoreFlowContract } from '../store-flow.contract.ts';
import { sqliteDriver } from './driver.ts';
import { listMigrations } from './open-database.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { SWEEP_SQL } from './sweep-plan.ts';

const { Database } = sqliteDriver();

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-'));
let n = 0;
const harness = {
  newStore: async (clock: ManualClock) => openSqliteStore(join(dir, `s${n++}.db`), { clock }),
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

runStoreContract('sqlite', harness);
runStoreFlowContract('sqlite', harness);
runStoreDeliveryContract('sqlite', harness);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isBatonError(err) ? err.code : `not a BatonError: ${String(err)}`;
  }
  return undefined;
}

describe('SQLite store specifics', () => {
  it('is durable by default: WAL, each commit synced before it is acknowledged', async () => {
    const store = openSqliteStore(join(dir, 'pragmas.db'));
    expect(store.database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.synchronous).toBe('FULL');
    // The connection commits at NORMAL (checkpoints still sync); the WAL's fdatasync runs after it.
    expect(store.database.pragma('synchronous', { simple: true })).toBe(1);
    await store.createRuns([task('durable')], []);
    expect(store.commitStats.syncs).toBe(1);
    const normal = openSqliteStore(join(dir, 'pragmas-normal.db'), { synchronous: 'NORMAL' });
    await normal.createRuns([task('normal')], []);
    expect(normal.commitStats.syncs).toBe(0);
    await normal.close();
    return store.close();
  });

  it('answers a read at once with durable: false, and a plain read only once what it saw is synced', async () => {
    const store = openSqliteStore(join(dir, 'peek.db'));
    const order: string[] = [];
    const written = store.createRuns([task('peeked')], []).then(() => order.push('write'));
    // The write commits in this turn's flush; its fdatasync is then on libuv's thread pool.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(store.commitStats.commits).toBeGreaterThan(0);
    const durable = store.getRun('peeked').then((run) => order.push(`durable ${run?.status}`));
    const peek = store.getRun('peeked', { durable: false }).then((run) => order.push(`peek ${run?.status}`));
    await Promise.all([written, durable, peek]);
    // The peek saw the committed row before its sync; the plain read waited for the sync.
    expect(order[0]).toBe('peek queued');
    expect(order.slice(1).sort()).toEqual(['durable queued', 'write']);
    return store.close();
  });

  it('groups the writes of one event-loop turn into one commit', async () => {
    const store = openSqliteStore(join(dir, 'group.db'), { clock: new ManualClock(T0) });
    const before = store.commitStats.commits;
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.createRuns([task(`g${i}`)], [])));
    expect(store.commitStats.commits - before).toBe(1);
    expect(store.commitStats.maxBatch).toBe(50);
    await store.close();
  });

  it('refuses a file that is not SQLite, and one that is SQLite but not Baton, without touching it', () => {
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'this is not a database at all, just text');
    expect(codeOf(() => openSqliteStore(junk))).toBe('STORE_CORRUPT');
    const foreign = join(dir, 'foreign.db');
    const db = new Database(foreign);
    db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY)');
    db.close();
    expect(codeOf(() => openSqliteStore(foreign))).toBe('STORE_INVALID');
    const check = new Database(foreign);
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type='table'").all()).toEqual([
      { name: 'customers' },
    ]);
    check.close();
  });

  it('refuses a missing file when it must exist, and a corrupted one', () => {
    expect(codeOf(() => openSqliteStore(join(dir, 'missing.db'), { mustExist: true }))).toBe('STORE_INVALID');
    const path = join(dir, 'torn.db');
    openSqliteStore(path).close();
    const bytes = Buffer.alloc(8192, 0xab);
    bytes.write('SQLite format 3\0', 0, 'latin1');
    writeFileSync(path, bytes);
    for (const suffix of ['-wal', '-shm']) rmSync(path + suffix, { force: true });
    expect(['STORE_CORRUPT', 'STORE_INVALID']).toContain(codeOf(() => openSqliteStore(path)));
  });

  it('reports damage found after the file opened as STORE_CORRUPT, from reads and writes alike', async () => {
    const path = join(dir, 'damaged-later.db');
    const clock = new ManualClock(T0);
    const first = openSqliteStore(path, { clock });
    await first.createRuns(
      Array.from({ length: 200 }, (_, i) => task(`d${i}`)),
      [],
    );
    first.database.pragma('wal_checkpoint(TRUNCATE)');
    const { rootpage } = first.database
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'runs'")
      .get() as { rootpage: number };
    const pageSize = first.database.pragma('page_size', { simple: true }) as number;
    await first.close();
    // The runs table's root page is overwritten; the header and Baton's own tables are intact.
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (rootpage - 1) * pageSize);
    closeSync(fd);
    const store = openSqliteStore(path, { clock });
    const failure = async (what: Promise<unknown>) => {
      try {
        await what;
      } catch (err) {
        return isBatonError(err) ? { code: err.code, message: err.message } : { code: String(err) };
      }
      return undefined;
    };
    for (const outcome of [
      await failure(store.listRuns({})),
      await failure(store.getRun('d7')),
      await failure(store.createRuns([task('new')], [])),
    ])
      expect(outcome).toMatchObject({ code: 'STORE_CORRUPT', message: expect.stringContaining(path) });
    await store.close();
  });

  it('reports a stored JSON value changed on disk as STORE_CORRUPT naming the file', async () => {
    const path = join(dir, 'flipped-json.db');
    const store = openSqliteStore(path, { clock: new ManualClock(T0) });
    await store.createRuns([task('j1')], []);
    // A flipped byte inside a row: SQLite's checks cannot see it, the JSON no longer parses.
    store.database.prepare(`UPDATE runs SET input = '{"a":1' || char(0) || '}' WHERE id = 'j1'`).run();
    const err = await store.getRun('j1').catch((e: unknown) => e);
    expect(isBatonError(err) && err.code).toBe('STORE_CORRUPT');
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toMatch(/stored JSON value does not parse/);
    await store.close();
  });

  it('refuses an empty file instead of setting it up as a new database, and leaves it as it is', () => {
    const path = join(dir, 'empty.db');
    writeFileSync(path, '');
    expect(codeOf(() => openSqliteStore(path))).toBe('STORE_INVALID');
    expect(() => openSqliteStore(path)).toThrow(/is an empty file \(0 bytes\), not a Baton database/);
    expect(statSync(path).size).toBe(0);
  });

  it('creates a new file whole, with incremental auto-vacuum, and leaves no temporary file', async () => {
    const sub = mkdtempSync(join(dir, 'fresh-'));
    const store = openSqliteStore(join(sub, 'new.db'));
    expect(store.database.pragma('auto_vacuum', { simple: true })).toBe(2);
    await store.close();
    expect(readdirSync(sub).filter((f) => f.includes('.new-'))).toEqual([]);
  });

  it('opens read-only: reads work, writes fail with STORE_INVALID, the file is not touched', async () => {
    const path = join(dir, 'ro.db');
    const clock = new ManualClock(T0);
    const rw = openSqliteStore(path, { clock });
    await rw.createRuns([task('ro1')], []);
    await rw.close();
    const bytes = (f: string) => readFileSync(f).toString('base64');
    const before = bytes(path);
    const ro = openSqliteStore(path, { clock, readonly: true });
    expect((await ro.getRun('ro1'))?.id).toBe('ro1');
    expect((await ro.listRuns({})).map((r) => r.id)).toEqual(['ro1']);
    let code: string | undefined;
    try {
      await ro.createRuns([task('ro2')], []);
    } catch (err) {
      code = isBatonError(err) ? err.code : String(err);
    }
    expect(code).toBe('STORE_INVALID');
    await ro.close();
    // The file is unchanged; SQLite may leave an empty -wal beside it (how WAL files are read).
    expect(bytes(path)).toBe(before);
    if (existsSync(`${path}-wal`)) expect(statSync(`${path}-wal`).size).toBe(0);
    expect(codeOf(() => openSqliteStore(join(dir, 'ro-missing.db'), { readonly: true }))).toBe(
      'STORE_INVALID',
    );
    expect(existsSync(join(dir, 'ro-missing.db'))).toBe(false);
  });

  it('sweeps a backlog off the event loop, by index, in batches, and returns space', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(join(dir, 'sweep.db'), { clock });
    const N = 1_200;
    for (let i = 0; i < N; i += 200)
      await store.createRuns(
        Array.from({ length: 200 }, (_, j) => task(`x${i + j}`)),
        Array.from({ length: 200 }, (_, j) => ({
          runId: `x${i + j}`,
          type: 'log:message' as const,
          data: { level: 'info' as const, message: 'x'.repeat(2_000) },
        })),
      );
    await store.createRuns([task('kept')], []);
    const db = store.database;
    // Finished runs whose TTL ends at T0 + 1 s; 'kept' lives longer.
    db.prepare("UPDATE runs SET status = 'succeeded', expires_at = ? WHERE id != 'kept'").run(T0 + 1_000);
    db.prepare("UPDATE runs SET status = 'succeeded', expires_at = ? WHERE id = 'kept'").run(T0 + 10_000);
    // Every statement of a sweep finds its rows by index, never by scanning the tables.
    db.exec(SWEEP_SQL.prepare);
    for (const sql of [SWEEP_SQL.anyExpired, SWEEP_SQL.pick, ...SWEEP_SQL.deletes]) {
      const args = sql === SWEEP_SQL.pick ? [0, 1] : sql === SWEEP_SQL.anyExpired ? [0] : [];
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>;
      const details = plan.map((p) => p.detail).join(' | ');
      expect(details).toMatch(/SEARCH/);
      expect(details).not.toMatch(/\bSCAN\b/);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pagesBefore = db.pragma('page_count', { simple: true }) as number;
    const loopHolds = store.commitStats.commits;
    // Nothing has expired yet: the sweep answers from one read, with no thread and no hold.
    expect(await store.sweep()).toEqual({ runs: 0 });
    expect(store.commitStats.sweeps.sweeps).toBe(0);
    await clock.advance(2_000);
    // Sweeps run on the sweeper thread, each one batch sized to the slice in real time.
    let swept = 0;
    let sweeps = 0;
    for (let r = await store.sweep(); r.runs > 0; r = await store.sweep()) {
      swept += r.runs;
      sweeps++;
    }
    expect(swept).toBe(N);
    // The last sweep, finding nothing expired, did not go to the thread.
    expect(store.commitStats.sweeps.sweeps).toBe(sweeps);
    // None of them was a transaction of the loop's connection.
    expect(store.commitStats.commits).toBe(loopHolds);
    expect((await store.listRuns({})).map((r) => r.id)).toEqual(['kept']);
    expect((db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).toBe(0);
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(db.pragma('page_count', { simple: true }) as number).toBeLessThan(pagesBefore);
    await store.close();
  });

  it('sweeps a memory database on its own connection, where no thread can open it', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(':memory:', { clock });
    await store.createRuns(
      Array.from({ length: 30 }, (_, i) => task(`m${i}`)),
      [],
    );
    store.database.prepare("UPDATE runs SET status = 'succeeded', expires_at = ?").run(T0 + 1_000);
    await clock.advance(2_000);
    let swept = 0;
    for (let r = await store.sweep(); r.runs > 0; r = await store.sweep()) swept += r.runs;
    expect(swept).toBe(30);
    expect(store.commitStats.sweeps.sweeps).toBe(0);
    expect(await store.listRuns({})).toEqual([]);
    await store.close();
  });

  it('applies migrations once when two connections open the same new file', () => {
    const path = join(dir, 'twice.db');
    const a = openSqliteStore(path);
    const b = openSqliteStore(path);
    const rows = a.database.prepare('SELECT version FROM baton_migrations').all();
    // Every migration file once (numbers are reserved per change, so there may be gaps).
    expect(rows).toEqual(listMigrations().map((m) => ({ version: m.version })));
    expect(rows.slice(0, 5)).toEqual([1, 2, 3, 4, 5].map((version) => ({ version })));
    return Promise.all([a.close(), b.close()]);
  });

  it('reads a checkpoint whose JSON was damaged as corrupt instead of throwing', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(join(dir, 'cp.db'), { clock });
    await store.createRuns([task('r1')], []);
    const [r] = await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] });
    await store.saveCheckpoint(
      { runId: 'r1', token: r?.leaseToken ?? 0 },
      { attempt: 1, state: { i: 1 }, record: {}, version: 1 },
      [],
    );
    store.database.prepare("UPDATE checkpoints SET state = '{\"i\": ' WHERE run_id = 'r1'").run();
    const cp = await store.getLastCheckpoint('r1');
    expect(cp?.corrupt).toMatch(/not valid JSON/);
    await store.close();
  });
});

describe('events appended several to a statement', () => {
  it('gives each the id it is stored under, in order, past one INSERT of EVENTS_PER_INSERT', async () => {
    const store = await harness.newStore(new ManualClock(T0));
    await store.createRuns([task('r1')], []);
    for (const count of [1, 2, 8, 9, 19]) {
      const appended = await store.appendEvents(
        Array.from({ length: count }, (_, i) =>
          newEvent('r1', 'log:message', { level: 'info' as const, message: `m${i}` }),
        ),
      );
      const stored = (await store.readEvents({ runId: 'r1' })).slice(-count);
      expect(appended.map((e) => [e.id, e.data])).toEqual(stored.map((e) => [e.id, e.data]));
    }
    await store.close();
  });
});
