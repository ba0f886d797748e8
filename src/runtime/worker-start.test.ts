/**
 * A restarted worker takes back a dead worker's runs before anything else, and that path is what a
 * crash costs (issue 18 item 4): its writes must share one durable commit, not wait for each other's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { ManualClock } from '../time/index.ts';
import { type Baton, createBaton } from './baton.ts';
import { defineTask } from './define-task.ts';
import { currentProcess } from './process-identity.ts';

const echo = defineTask({ name: 'echo', run: async (input: { n: number }) => input.n });

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

/** A pid that belonged to a process of this host that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  if (child.pid === undefined) throw new Error('could not start a child process');
  return child.pid;
}

it("registers itself, takes back a dead worker's runs and expired leases in ONE commit", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-worker-start-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock('2026-11-27T12:00:00Z');
  const store: SqliteStore = openSqliteStore(join(dir, 'baton.db'), { clock, synchronous: 'NORMAL' });
  cleanup.push(() => store.close());

  // Two runs left running by a process that died on this host, one by a process elsewhere whose
  // lease has run out.
  const before = createBaton({ store, clock, worker: false, tasks: [echo] });
  const runs = [];
  for (let n = 1; n <= 3; n++) runs.push(await before.start(echo, { n }));
  await before.close();
  const { host } = currentProcess();
  const dead = `${host}/${deadPid()}/dead`;
  await store.registerWorker({
    id: dead,
    host,
    pid: Number(dead.split('/')[1]),
    processStart: null,
    startedAt: clock.now(),
    heartbeatAt: clock.now(),
  });
  await store.claimRuns({ owner: dead, leaseMs: 3_600_000, limit: 2, names: ['echo'] });
  await store.claimRuns({ owner: 'elsewhere/1/x', leaseMs: 1_000, limit: 1, names: ['echo'] });
  await clock.advance(2_000);

  const commits = store.commitStats.commits;
  const baton: Baton = createBaton({ store, clock, tasks: [echo] });
  cleanup.push(() => baton.close());
  await baton.ready();
  // Before: register, release the dead worker's runs, remove it, recover expired leases — four.
  expect(store.commitStats.commits - commits).toBe(1);
  expect((await store.listWorkers(host)).map((w) => w.id)).not.toContain(dead);

  for (const [i, run] of runs.entries())
    expect(await baton.handle(run.id).result()).toMatchObject({ status: 'succeeded', output: i + 1 });
  // Why each went back to the queue: two for their owner's death, one for its lease.
  const reasons: unknown[] = [];
  for (const run of runs)
    for (const e of await store.readEvents({ runId: run.id }))
      if (e.type === 'lease:recovered' && 'reason' in e.data) reasons.push(e.data.reason);
  expect(reasons.sort()).toEqual(['expired', 'owner_gone', 'owner_gone']);
});

it("starts a dead worker's run again after ONE commit: the first claim joins the recovery's", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-worker-start-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock('2026-11-27T12:00:00Z');
  const store: SqliteStore = openSqliteStore(join(dir, 'baton.db'), { clock });
  cleanup.push(() => store.close());
  const bodies: Array<{ runId: string; commits: number; syncs: number; token: number }> = [];
  const probe = defineTask({
    name: 'probe',
    run: async (_input: { n: number }, ctx) => {
      const { commits, syncs } = store.commitStats;
      bodies.push({ runId: ctx.runId, commits, syncs, token: (await store.getRun(ctx.runId))!.leaseToken });
      return 'done';
    },
  });

  const before = createBaton({ store, clock, worker: false, tasks: [probe] });
  const run = await before.start(probe, { n: 1 });
  await before.close();
  const { host } = currentProcess();
  const pid = deadPid();
  const dead = `${host}/${pid}/dead`;
  await store.registerWorker({
    id: dead,
    host,
    pid,
    processStart: null,
    startedAt: clock.now(),
    heartbeatAt: clock.now(),
  });
  // Held for an hour: only its owner's death can give it back before then.
  const [held] = await store.claimRuns({ owner: dead, leaseMs: 3_600_000, limit: 1, names: ['probe'] });
  expect(held?.id).toBe(run.id);

  const { commits, syncs } = store.commitStats;
  const baton: Baton = createBaton({ store, clock, tasks: [probe] });
  cleanup.push(() => baton.close());
  expect(await baton.handle(run.id).result()).toMatchObject({ status: 'succeeded', output: 'done' });
  // Register, release the dead owner's run, remove it, recover expired leases, the first sweep and
  // the claim: one transaction, one WAL sync, then the body (before: two of each, in turn).
  expect(bodies).toHaveLength(1);
  expect(bodies[0]).toMatchObject({ runId: run.id, commits: commits + 1, syncs: syncs + 1 });
  // Fenced as before: the retake holds a newer lease token than the dead owner's.
  expect(bodies[0]?.token).toBe((held?.leaseToken ?? 0) + 1);
  const types = (await store.readEvents({ runId: run.id })).map((e) => e.type);
  expect(types.indexOf('lease:recovered')).toBeLessThan(types.lastIndexOf('attempt:started'));
});

it('fills a worker of 50 slots from one claim when many runs are claimable at once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-worker-start-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock('2026-11-27T12:00:00Z');
  const store: SqliteStore = openSqliteStore(join(dir, 'baton.db'), { clock });
  cleanup.push(() => store.close());
  let started = 0;
  let allStarted = () => {};
  const fifty = new Promise<void>((resolve) => {
    allStarted = resolve;
  });
  const hold = defineTask({
    name: 'hold',
    run: (_input: unknown, ctx) =>
      new Promise<string>((resolve) => {
        if (++started === 50) allStarted();
        ctx.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
      }),
  });
  const before = createBaton({ store, clock, worker: false, tasks: [hold] });
  await Promise.all(Array.from({ length: 80 }, () => before.start(hold, {})));
  await before.close();

  // Each claim waits for its commit's WAL sync before the next one: counted here.
  const limits: number[] = [];
  const claimRuns = store.claimRuns.bind(store);
  store.claimRuns = (request) => {
    limits.push(request.limit);
    return claimRuns(request);
  };
  const baton: Baton = createBaton({ store, clock, tasks: [hold], worker: { concurrency: 50 } });
  cleanup.push(() => baton.close());
  await fifty;
  // 50 slots and the ready bite of 16, claimed at most 64 at a time (before: 16, four claims in turn).
  expect(limits).toEqual([64]);
  expect(started).toBe(50);
  expect((await store.countRuns()).running).toBe(64);
});
