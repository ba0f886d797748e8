/**
 * What a run costs in SQL statements on the SQLite store (issue 18: one worker's throughput is bound
 * by the main thread's statements). Every statement the store executes is logged by wrapping the
 * driver's `prepare`; the assertions name the statements a run must not need.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { logStatements } from '../../../test/statement-log.ts';
import { defineTask } from '../../runtime/define-task.ts';
import { type TestRuntime, testRuntime } from '../../testing/index.ts';

const { executed, count } = logStatements();

let rt: TestRuntime | undefined;

/** A parent task that invokes a child task, both registered on `runtime`. */
function registerParentAndChild(runtime: TestRuntime) {
  const child = defineTask({ name: 'child', retry: false, run: () => 'c' });
  const parent = defineTask({
    name: 'parent',
    retry: false,
    run: async (_: unknown, ctx) => (await ctx.invoke(child, {})).status,
  });
  runtime.baton.register(child);
  runtime.baton.register(parent);
  return { parent };
}
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

describe('statements per run (SQLite)', () => {
  it('a run on its first lease reads no steps or checkpoints, creation reads no root back, and ending searches no descendants', async () => {
    rt = testRuntime({ worker: { concurrency: 10 } });
    const noop = defineTask({ name: 'noop', retry: false, run: () => 'ok' });
    rt.baton.register(noop);
    await rt.baton.ready();
    executed.length = 0;
    const runs = await Promise.all(Array.from({ length: 40 }, (_, i) => rt?.baton.start(noop, { i })));
    for (const run of runs) expect((await run?.result())?.status).toBe('succeeded');

    expect(count(/^INSERT INTO runs /)).toBe(40);
    expect(count(/FROM steps WHERE run_id/)).toBe(0);
    expect(count(/FROM checkpoints WHERE run_id/)).toBe(0);
    expect(count(/^SELECT root_id FROM runs/)).toBe(0);
    expect(count(/WITH RECURSIVE/)).toBe(0);
  });

  it('claims any number of runs in a fixed number of statements', async () => {
    rt = testRuntime({ worker: false });
    const noop = defineTask({ name: 'noop', retry: false, run: () => 'ok' });
    rt.baton.register(noop);
    await Promise.all(Array.from({ length: 16 }, (_, i) => rt?.baton.start(noop, { i })));
    executed.length = 0;
    const claimed = await rt.store.claimRuns({ owner: 'w1', leaseMs: 5_000, limit: 16, names: ['noop'] });
    expect(claimed).toHaveLength(16);
    // In claim order, each on its first lease.
    expect(claimed.map((r) => r.id)).toEqual([...claimed.map((r) => r.id)].sort());
    expect(claimed.every((r) => r.status === 'running' && r.leaseOwner === 'w1' && r.leaseToken === 1)).toBe(
      true,
    );
    expect(count(/^UPDATE runs SET status = 'running'/)).toBe(1);
    // Two candidate reads (runs ready now, runs whose wake time came), the claim, the read back
    // (and the write queue's one look at total_changes() after the commit).
    expect(count(/^(SELECT (?!total_changes\(\))|UPDATE|INSERT|DELETE|WITH)/)).toBe(4);
  });

  it('finds due runs without reading the runs that sleep longer', async () => {
    rt = testRuntime({ worker: false });
    const noop = defineTask({ name: 'noop', retry: false, run: () => 'ok' });
    rt.baton.register(noop);
    const now = rt.clock.now();
    const later = Array.from({ length: 200 }, (_, i) => ({ id: `a${i}`, wakeAt: now + 3_600_000 }));
    const due = Array.from({ length: 3 }, (_, i) => ({ id: `b${i}`, wakeAt: now - 1 }));
    await rt.store.createRuns(
      [...later, ...due].map(({ id, wakeAt }) => ({
        id,
        kind: 'task' as const,
        name: 'noop',
        input: {},
        status: 'waiting' as const,
        waitReason: 'timer' as const,
        wakeAt,
      })),
      [],
    );
    executed.length = 0;
    const claimed = await rt.store.claimRuns({ owner: 'w1', leaseMs: 5_000, limit: 16, names: ['noop'] });
    expect(claimed.map((r) => r.id)).toEqual(['b0', 'b1', 'b2']);
    // Every candidate read walks an index that holds no run asleep past now: the ready runs' index
    // holds no waiting run at all, the due runs' index is searched by wake time up to now.
    const db = rt.store.database;
    const reads = [...new Set(executed.filter((sql) => /^SELECT id, name/.test(sql)))];
    expect(reads).toHaveLength(2);
    const plans = reads.map((sql) =>
      (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ now, names: '[]', scan: 1 }) as Array<{
          detail: string;
        }>
      )
        .map((r) => r.detail)
        .join('; '),
    );
    expect(
      plans.some((p) => /SEARCH runs USING INDEX runs_claimable_due \(wake_at>\? AND wake_at<\?\)/.test(p)),
    ).toBe(true);
    const ready = plans.find((p) => /USING INDEX runs_claimable\b(?!_)/.test(p));
    expect(ready).toBeDefined();
    const index = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'runs_claimable'").get() as {
      sql: string;
    };
    expect(index.sql).toMatch(/status = 'queued' AND wake_at IS NULL/);
    expect(index.sql).not.toMatch(/waiting/);
  });

  it('indexes a top-level run’s events once (events_run), a child’s twice, and reads a tree without a scan', async () => {
    rt = testRuntime({ worker: { concurrency: 4 } });
    const { parent } = registerParentAndChild(rt);
    const noop = defineTask({ name: 'noop', retry: false, run: () => 'ok' });
    rt.baton.register(noop);
    const runs = await Promise.all(Array.from({ length: 10 }, (_, i) => rt?.baton.start(noop, { i })));
    for (const run of runs) expect((await run?.result())?.status).toBe('succeeded');
    const db = rt.store.database;
    const inRootIndex = () =>
      db.prepare('SELECT run_id FROM events INDEXED BY events_root WHERE root_id <> run_id').pluck().all();
    expect(db.prepare('SELECT count(*) FROM events').pluck().get()).toBeGreaterThanOrEqual(50);
    expect(inRootIndex()).toEqual([]);
    const run = await rt.baton.start(parent, {});
    expect((await run.result()).status).toBe('succeeded');
    const childEvents = inRootIndex();
    expect(childEvents.length).toBeGreaterThan(0);
    expect(childEvents.every((id) => id !== run.id)).toBe(true);
    executed.length = 0;
    const tree = await rt.store.readEvents({ rootId: run.id });
    // One statement for the tree (the runtime may read other events meanwhile).
    const reads = executed.filter((sql) => /\bFROM events\b.*\broot_id\b/.test(sql));
    expect(reads).toHaveLength(1);
    expect(tree.length).toBe(
      db.prepare('SELECT count(*) FROM events NOT INDEXED WHERE root_id = ?').pluck().get(run.id),
    );
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${reads[0]}`).all(run.id, 0, 1e15, run.id, 0, 1e15, 10) as Array<{
        detail: string;
      }>
    )
      .map((r) => r.detail)
      .join('; ');
    expect(plan).toMatch(/INDEX events_run\b.*INDEX events_root\b/);
    expect(plan).not.toMatch(/SCAN events\b/);
  });

  it('still searches the descendants of a run that has children when it ends', async () => {
    rt = testRuntime({ worker: { concurrency: 4 } });
    const { parent } = registerParentAndChild(rt);
    executed.length = 0;
    const run = await rt.baton.start(parent, {});
    expect((await run.result()).status).toBe('succeeded');
    expect(count(/WITH RECURSIVE/)).toBeGreaterThan(0);
  });
});
