/**
 * The indexes of `runs` against the statements that need them (issue 18: every index a run's state
 * change touches is pages its commit writes). Every statement a run's life and a worker's upkeep
 * execute on the store's connection is logged with its arguments and explained (a sweep's run on
 * the sweeper thread's connection: sqlite-store.test.ts explains those): none may scan the runs table whole
 * (except counting runs by status, which reads them all by design), and the lease statements use
 * runs_leased, the one index (migration 0024) that replaced runs_owner and runs_lease_expiry. Reads
 * and deletes of events by root take a root's own events through events_run and the rest through
 * events_root, partial on child runs' events since migration 0027; none scans the events table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { T0, task } from '../store.contract.ts';
import { sqliteDriver } from './driver.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { SWEEP_SQL } from './sweep-plan.ts';

type Prepare = (this: unknown, sql: string) => { run: Fn; get: Fn; all: Fn };
type Fn = (...args: unknown[]) => unknown;

const executed = new Map<string, unknown[]>();
const proto = sqliteDriver().Database.prototype as unknown as { prepare: Prepare };
const original = proto.prepare;
const dir = mkdtempSync(join(tmpdir(), 'baton-plans-'));

beforeAll(() => {
  proto.prepare = function (this: unknown, sql: string) {
    const statement = original.call(this, sql);
    for (const method of ['run', 'get', 'all'] as const) {
      const call = statement[method].bind(statement);
      statement[method] = (...args: unknown[]) => {
        executed.set(sql, args);
        return call(...args);
      };
    }
    return statement;
  };
});
afterAll(() => {
  proto.prepare = original;
  rmSync(dir, { recursive: true, force: true });
});

describe('indexes of runs (SQLite)', () => {
  it('a run’s life, upkeep and sweeps use an index for every statement on runs, leases runs_leased', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(join(dir, 'plans.db'), { clock });
    const db = store.database;
    await store.createRuns(
      Array.from({ length: 30 }, (_, i) => task(`r${i}`)),
      [],
    );
    executed.clear();
    const claimed = await store.claimRuns({ owner: 'w1', leaseMs: 5_000, limit: 20, names: ['work'] });
    expect(claimed).toHaveLength(20);
    await store.heartbeat('w1', 5_000, ['r0', 'r1']);
    await store.nextWakeAt();
    await store.transition(
      'r0',
      { status: 'succeeded', output: 'ok', finishedAt: clock.now(), expiresAt: clock.now() + 1_000 },
      [],
      { fence: { runId: 'r0', token: 1 } },
    );
    await clock.advance(10_000);
    expect((await store.recoverExpiredLeases()).length).toBeGreaterThan(0);
    await store.claimRuns({ owner: 'w2', leaseMs: 5_000, limit: 5, names: ['work'] });
    expect((await store.releaseOwners(['w2'], 'released')).length).toBe(5);
    expect(await store.sweep()).toEqual({ runs: 1 });
    await store.listRuns({ status: 'queued' });

    const plans = [...executed]
      .filter(([sql]) => /\bruns\b/.test(sql) && /^\s*(SELECT|UPDATE|DELETE|WITH)/.test(sql))
      .map(([sql, args]) => ({
        sql: sql.replace(/\s+/g, ' ').trim(),
        plan: (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join('; '),
      }));
    if (process.env.PLANS) console.log(plans);
    // A worker's runs (heartbeat, release), expired leases, and the next lease to expire.
    const lease = plans.filter((p) =>
      /^SELECT id(, lease_owner)? FROM runs (INDEXED BY runs_leased )?WHERE status = 'running' AND lease_owner IS NOT NULL|min\(lease_expires_at\)/.test(
        p.sql,
      ),
    );
    expect(lease).toHaveLength(4);
    for (const p of lease) expect(p.plan, p.sql).toMatch(/INDEX runs_leased/);
    for (const p of plans.filter((q) => !/GROUP BY status/.test(q.sql)))
      expect(p.plan, p.sql).not.toMatch(/SCAN runs(?! USING)/);
    const indexes = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'").all() as Array<{
        name: string;
      }>
    ).map((r) => r.name);
    expect(indexes).toContain('runs_leased');
    expect(indexes).not.toContain('runs_owner');
    expect(indexes).not.toContain('runs_lease_expiry');
    await store.close();
  });

  it('reads and deletes events by run and by root through events_run and the partial events_root, never by a scan', async () => {
    const clock = new ManualClock(T0);
    const store = openSqliteStore(join(dir, 'events.db'), { clock });
    const db = store.database;
    await store.createRuns(
      [task('t'), task('t.a', { parentId: 't', rootId: 't' }), task('u')],
      ['t', 't.a', 'u', 't.a', 't'].map((runId) => ({
        runId,
        type: 'log:message' as const,
        data: { level: 'info' as const, message: runId },
      })),
    );
    executed.clear();
    expect(await store.readEvents({ rootId: 't' })).toHaveLength(4);
    expect(await store.readEvents({ rootId: 't', afterId: 1, limit: 2 })).toHaveLength(2);
    expect(await store.readEvents({ runId: 't.a' })).toHaveLength(2);
    const reads = [...executed].filter(([sql]) => /\bFROM events\b/.test(sql) && !/MAX\(id\)/.test(sql));
    expect(reads).toHaveLength(2);
    const explain = (sql: string, args: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join('; ');
    const byRoot = reads.find(([sql]) => /root_id = \?/.test(sql));
    expect(byRoot).toBeDefined();
    const [rootSql, rootArgs] = byRoot as [string, unknown[]];
    const rootPlan = explain(rootSql, rootArgs);
    // The root's own events and its children's, each walked in id order and merged: no sort, no scan.
    expect(rootPlan).toMatch(/SEARCH events USING INDEX events_run \(run_id=\? AND id>\? AND id<\?\)/);
    expect(rootPlan).toMatch(/SEARCH events USING INDEX events_root \(root_id=\? AND id>\? AND id<\?\)/);
    expect(rootPlan).not.toMatch(/TEMP B-TREE/);
    for (const [sql, args] of reads) expect(explain(sql, args), sql).not.toMatch(/SCAN events\b/);
    // The sweep's deletes of events (run on the sweeper thread's connection, explained here).
    db.exec(SWEEP_SQL.prepare);
    const deletes = SWEEP_SQL.deletes.filter((sql) => /^DELETE FROM events\b/.test(sql));
    expect(deletes).toHaveLength(2);
    const deletePlans = deletes.map((sql) => explain(sql, []));
    expect(deletePlans[0]).toMatch(/SEARCH events USING INDEX events_run \(run_id=\?\)/);
    expect(deletePlans[1]).toMatch(/SEARCH events USING INDEX events_root \(root_id=\?\)/);
    for (const p of deletePlans) expect(p).not.toMatch(/SCAN events\b/);
    await store.close();
  });

  it('keeps savepoint journals in memory: a group commit writes no temporary file', async () => {
    const store = openSqliteStore(join(dir, 'temp.db'));
    // 2 = MEMORY: the journal of each write's savepoint spilled past 64 KB to a file before.
    expect(store.database.pragma('temp_store', { simple: true })).toBe(2);
    await store.close();
  });
});
