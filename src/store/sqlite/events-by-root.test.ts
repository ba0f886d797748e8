/**
 * Events by root since migration 0027 (issue 18 item 3): `events_root` holds only the events of runs
 * that are not their own root, and every read or delete by root takes a root's own events through
 * `events_run` and the rest through the partial index. The answers must be what one scan of the
 * table by `root_id` gives, in id order, for trees whose runs' events interleave; a file written
 * before the migration keeps every event.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { T0, task } from '../store.contract.ts';
import { openSqliteStore, type SqliteStore } from './sqlite-store.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-events-root-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const log = (runId: string, message: string) => ({
  runId,
  type: 'log:message' as const,
  data: { level: 'info' as const, message },
});

/**
 * Two trees and a lone run whose events interleave: root `t` with children `t.a`, `t.b` and a
 * grandchild `t.a.x`, root `u` with child `u.a`, and `v` alone.
 */
async function interleavedTrees(store: SqliteStore): Promise<void> {
  await store.createRuns(
    [
      task('t'),
      task('t.a', { parentId: 't', rootId: 't' }),
      task('t.b', { parentId: 't', rootId: 't' }),
      task('t.a.x', { parentId: 't.a', rootId: 't' }),
      task('u'),
      task('u.a', { parentId: 'u', rootId: 'u' }),
      task('v'),
    ],
    [log('t', 'created'), log('u.a', 'created'), log('t.a', 'created')],
  );
  const order = ['t.a', 'u', 't', 'v', 't.b', 'u.a', 't.a.x', 't', 't.b', 'u', 't.a', 'v', 't', 't.a.x'];
  for (let round = 0; round < 3; round++) {
    for (const [i, runId] of order.entries()) await store.appendEvents([log(runId, `${round}.${i}`)]);
    // Several runs in one INSERT: their events get consecutive ids.
    await store.appendEvents(['t.b', 't', 'u.a', 't.a', 'u'].map((r) => log(r, `batch ${round}`)));
  }
}

/** What one scan of the table answers: the reference the indexed reads must equal. */
function scanned(store: SqliteStore, rootId: string, after = 0, limit = 10_000): number[] {
  return store.database
    .prepare('SELECT id FROM events NOT INDEXED WHERE root_id = ? AND id > ? ORDER BY id LIMIT ?')
    .pluck()
    .all(rootId, after, limit) as number[];
}

const ids = (events: ReadonlyArray<{ id: number }>) => events.map((e) => e.id);

function plan(store: SqliteStore, sql: string, args: unknown[]): string {
  return (store.database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>)
    .map((r) => r.detail)
    .join('; ');
}

describe('events by root (SQLite, migration 0027)', () => {
  it('reads a tree whose runs’ events interleave in id order, page by page, as a scan by root would', async () => {
    const store = openSqliteStore(join(dir, 'read.db'));
    await interleavedTrees(store);
    const tree = await store.readEvents({ rootId: 't' });
    expect(ids(tree)).toEqual(scanned(store, 't'));
    expect(new Set(tree.map((e) => e.runId))).toEqual(new Set(['t', 't.a', 't.b', 't.a.x']));
    expect(ids(await store.readEvents({ rootId: 'u' }))).toEqual(scanned(store, 'u'));
    expect(ids(await store.readEvents({ rootId: 'v' }))).toEqual(scanned(store, 'v'));
    expect(await store.readEvents({ rootId: 't.a' })).toEqual([]);
    // Every page boundary and page size gives the same slice as the scan.
    for (const limit of [1, 2, 3, 7])
      for (const after of [0, ...scanned(store, 't')]) {
        const page = await store.readEvents({ rootId: 't', afterId: after, limit });
        expect(ids(page), `after ${after}, limit ${limit}`).toEqual(scanned(store, 't', after, limit));
      }
    // Paging through with the last id seen yields the tree once, in order.
    const paged: number[] = [];
    for (let page = await store.readEvents({ rootId: 't', limit: 4 }); page.length > 0; ) {
      paged.push(...ids(page));
      page = await store.readEvents({ rootId: 't', afterId: paged.at(-1), limit: 4 });
    }
    expect(paged).toEqual(ids(tree));
    // Only the children's events are in events_root.
    const inRootIndex = store.database
      .prepare('SELECT run_id FROM events INDEXED BY events_root WHERE root_id <> run_id ORDER BY id')
      .pluck()
      .all() as string[];
    expect(inRootIndex.length).toBeGreaterThan(0);
    expect(inRootIndex.every((r) => ['t.a', 't.b', 't.a.x', 'u.a'].includes(r))).toBe(true);
    await store.close();
  });

  it('reads rows whose root is not what the runs say the same as a scan does', async () => {
    // The runtime always writes a top-level run's events with itself as root; the reads must not
    // depend on it: an event of `t` filed under another root belongs to that root only.
    const store = openSqliteStore(join(dir, 'odd.db'));
    await interleavedTrees(store);
    const insert = store.database.prepare(
      "INSERT INTO events (run_id, root_id, type, at, data) VALUES (?, ?, 'log:message', 0, '{}')",
    );
    insert.run('t', 'u');
    insert.run('u.a', 't');
    insert.run('t', 't');
    for (const root of ['t', 'u', 'v'])
      expect(ids(await store.readEvents({ rootId: root })), root).toEqual(scanned(store, root));
    await store.close();
  });

  it('scoped execution_logs reads give a scan’s rows in id order, through the two indexes', async () => {
    const store = openSqliteStore(join(dir, 'logs.db'));
    await interleavedTrees(store);
    const sql =
      'SELECT "log_id", "run_id", "root_id", "task", "event" FROM "execution_logs" WHERE "root_id" = ? LIMIT ?';
    const rows = store.database.prepare(sql).all('t', 1_000) as Array<{ log_id: number; root_id: string }>;
    expect(rows.map((r) => r.log_id)).toEqual(scanned(store, 't'));
    expect(rows.every((r) => r.root_id === 't')).toBe(true);
    expect(
      (store.database.prepare(sql).all('t', 5) as Array<{ log_id: number }>).map((r) => r.log_id),
    ).toEqual(scanned(store, 't', 0, 5));
    // The whole view is the whole table, once.
    expect(store.database.prepare('SELECT count(*) FROM execution_logs').pluck().get()).toBe(
      store.database.prepare('SELECT count(*) FROM events').pluck().get(),
    );
    const p = plan(store, sql, ['t', 5]);
    expect(p).toMatch(/USING INDEX events_run \(run_id=\?\)/);
    expect(p).toMatch(/USING INDEX events_root \(root_id=\?\)/);
    expect(p).not.toMatch(/SCAN e\b/);
    await store.close();
  });

  it('sweeps an expired tree’s interleaved events, its children’s included, and keeps the others', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(join(dir, 'sweep.db'), { clock });
    await interleavedTrees(store);
    // And rows filed under a root other than their run's (see above): the sweep goes by root_id.
    const insert = store.database.prepare(
      "INSERT INTO events (run_id, root_id, type, at, data) VALUES (?, ?, 'log:message', 0, '{}')",
    );
    insert.run('t', 'u');
    insert.run('u.a', 't');
    const kept = [...scanned(store, 'u'), ...scanned(store, 'v')].sort((a, b) => a - b);
    store.database
      .prepare("UPDATE runs SET status = 'succeeded', expires_at = ? WHERE root_id = 't'")
      .run(T0 + 1);
    await clock.advance(10);
    expect(await store.sweep()).toEqual({ runs: 4 });
    expect(store.database.prepare('SELECT id FROM events ORDER BY id').pluck().all()).toEqual(kept);
    expect(await store.readEvents({ rootId: 't' })).toEqual([]);
    await store.close();
  });

  it('upgrades a file written before it without losing an event, and reads it the same', async () => {
    const path = join(dir, 'upgrade.db');
    const before = openSqliteStore(path);
    await interleavedTrees(before);
    // The index and view as migrations 0001 and 0003 left them: a file from before 0027.
    before.database.exec(`
      DROP INDEX events_root;
      CREATE INDEX events_root ON events (root_id, id);
      DROP VIEW execution_logs;
      CREATE VIEW execution_logs AS
        SELECT e.id AS log_id, e.run_id, e.root_id, r.name AS task, r.step_id, e.type AS event, e.at, e.data
        FROM events e LEFT JOIN runs r ON r.id = e.run_id;
      DELETE FROM baton_migrations WHERE version = 27;`);
    const all = before.database.prepare('SELECT * FROM events ORDER BY id').all();
    const logs = before.database.prepare('SELECT * FROM execution_logs WHERE root_id = ?').all('t');
    const trees = {
      t: await before.readEvents({ rootId: 't' }),
      u: await before.readEvents({ rootId: 'u' }),
      v: await before.readEvents({ rootId: 'v' }),
    };
    expect(trees.t.length).toBeGreaterThan(0);
    await before.close();

    const after = openSqliteStore(path);
    const index = after.database
      .prepare("SELECT sql FROM sqlite_schema WHERE name = 'events_root'")
      .pluck()
      .get();
    expect(index).toMatch(/WHERE root_id <> run_id/);
    expect(after.database.prepare('SELECT * FROM events ORDER BY id').all()).toEqual(all);
    expect(after.database.prepare('SELECT * FROM execution_logs WHERE root_id = ?').all('t')).toEqual(logs);
    for (const [root, events] of Object.entries(trees))
      expect(await after.readEvents({ rootId: root }), root).toEqual(events);
    expect(after.database.pragma('integrity_check', { simple: true })).toBe('ok');
    // The upgraded file goes on: a new child's events are found by root.
    await after.createRuns([task('t.c', { parentId: 't', rootId: 't' })], [log('t.c', 'late')]);
    expect((await after.readEvents({ rootId: 't' })).at(-1)?.runId).toBe('t.c');
    await after.close();
  });
});
