import { afterEach, describe, expect, it, vi } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

/** A task that holds its slot until released (or its attempt is stopped). */
function holder() {
  const releases: Array<() => void> = [];
  const task = defineTask({
    name: 'hold',
    run: (_: unknown, ctx) =>
      new Promise<string>((resolve) => {
        releases.push(() => resolve('done'));
        ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
      }),
  });
  return {
    task,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

describe('a run started or resumed in this process', () => {
  it('is claimed by the local worker in the commit that creates it', async () => {
    rt = testRuntime({ worker: { concurrency: 2 } });
    const { task, releaseAll } = holder();
    rt.baton.register(task);
    await rt.baton.ready();
    const before = rt.store.commitStats.commits;
    const run = await rt.baton.start(task, {});
    expect(rt.store.commitStats.commits - before).toBe(1);
    expect((await rt.store.getRun(run.id))?.status).toBe('running');
    releaseAll();
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'done' });
  });

  it('claims the runs started in one turn together, in the commit that creates them', async () => {
    // One claim per run cost the loop a savepoint and three statements each: a burst of starts was
    // mostly claims (issue 18 item 5).
    rt = testRuntime({ worker: { concurrency: 60 } });
    const { task, releaseAll } = holder();
    rt.baton.register(task);
    await rt.baton.ready();
    const claims = vi.spyOn(rt.store, 'claimRuns');
    const before = rt.store.commitStats.commits;
    const runs = await Promise.all(
      Array.from({ length: 40 }, () => (rt as TestRuntime).baton.start(task, {})),
    );
    expect(claims).toHaveBeenCalledTimes(1);
    expect(claims.mock.calls[0]?.[0].ids).toHaveLength(40);
    expect(rt.store.commitStats.commits - before).toBe(1);
    const statuses = await Promise.all(runs.map(async (r) => (await rt?.store.getRun(r.id))?.status));
    expect(statuses.every((s) => s === 'running')).toBe(true);
    releaseAll();
    for (const r of runs) expect(await r.result()).toMatchObject({ status: 'succeeded' });
  });

  it('waits for the usual claim when the worker has no room, and never exceeds the concurrency', async () => {
    rt = testRuntime({ worker: { concurrency: 2 } });
    const { task, releaseAll } = holder();
    rt.baton.register(task);
    await rt.baton.ready();
    const runs = await Promise.all([1, 2, 3].map(() => rt?.baton.start(task, {})));
    const statuses = await Promise.all(runs.map(async (r) => (await rt?.store.getRun(r?.id ?? ''))?.status));
    expect(statuses.filter((s) => s === 'running')).toHaveLength(2);
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(1);
    releaseAll();
    await rt.clock.advance(1);
    releaseAll();
    for (const r of runs) expect(await r?.result()).toMatchObject({ status: 'succeeded' });
  });

  it("keeps a task's own concurrency limit when runs are offered", async () => {
    rt = testRuntime({ worker: { concurrency: 5 } });
    const releases: Array<() => void> = [];
    const single = defineTask({
      name: 'single',
      concurrency: 1,
      run: (_: unknown, ctx) =>
        new Promise<string>((resolve) => {
          releases.push(() => resolve('done'));
          ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
        }),
    });
    rt.baton.register(single);
    await rt.baton.ready();
    const [a, b] = await Promise.all([rt.baton.start(single, {}), rt.baton.start(single, {})]);
    const statuses = await Promise.all(
      [a, b].map(async (r) => (await rt?.store.getRun(r?.id ?? ''))?.status),
    );
    expect(statuses.sort()).toEqual(['queued', 'running']);
    for (let i = 0; i < 2; i++) {
      releases.splice(0).forEach((release) => {
        release();
      });
      await rt.clock.advance(1);
    }
    for (const r of [a, b]) expect(await r.result()).toMatchObject({ status: 'succeeded' });
  });

  it('is claimed again in the commit that resumes it', async () => {
    rt = testRuntime({ worker: { concurrency: 2 } });
    const { task, releaseAll } = holder();
    rt.baton.register(task);
    await rt.baton.ready();
    // Parked as a resumable timeout leaves it, waiting for its client to resume it.
    await rt.store.createRuns(
      [{ id: 'parked', kind: 'task', name: 'hold', input: {}, status: 'waiting', waitReason: 'resume' }],
      [],
    );
    const before = rt.store.commitStats.commits;
    const resumed = await rt.baton.resume('parked');
    expect(resumed.resumed.action).toBe('requeued');
    expect(rt.store.commitStats.commits - before).toBe(1);
    expect((await rt.store.getRun('parked'))?.status).toBe('running');
    releaseAll();
    expect(await rt.baton.result('parked')).toMatchObject({ status: 'succeeded', output: 'done' });
  });
});
