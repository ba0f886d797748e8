import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const HOUR = 3_600_000;
// Long polls and leases: advancing the manual clock by hours fires every poll on the way. The
// worker's wake timer is armed for the store's next wake time, so waking on time does not depend on them.
const worker = { pollMs: HOUR, leaseMs: HOUR };

describe('ctx.sleep / ctx.sleepUntil (durable)', () => {
  it('suspends the run on its wake time with no lease or slot, and replays memoized steps when it wakes', async () => {
    rt = testRuntime({ worker: { ...worker, concurrency: 1 } });
    const ran: string[] = [];
    const napper = defineTask({
      name: 'napper',
      timeout: '1m',
      run: async (_: unknown, ctx) => {
        const before = await ctx.step('before', () => {
          ran.push('before');
          return { at: ctx.clock.now() };
        });
        await ctx.sleep('2h');
        const after = await ctx.step('after', () => {
          ran.push('after');
          return { at: ctx.clock.now() };
        });
        return { slept: after.at - before.at };
      },
    });
    const other = defineTask({ name: 'other', run: async () => 'done' });
    const start = rt.clock.now();
    const run = await rt.baton.start(napper, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    const waiting = await rt.baton.getRun(run.id);
    expect(waiting).toMatchObject({ status: 'waiting', waitReason: 'timer', leaseOwner: null });
    expect(waiting?.wakeAt).toBe(start + 2 * HOUR);
    // The one slot is free: another run goes through while the first sleeps.
    const o = await rt.baton.start(other, {});
    expect(await o.result()).toMatchObject({ status: 'succeeded', output: 'done' });

    await rt.clock.advance(2 * HOUR - 1);
    expect((await rt.baton.getRun(run.id))?.status).toBe('waiting');
    await rt.clock.advance(1);
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { slept: 2 * HOUR } });
    expect(ran).toEqual(['before', 'after']);
    const types = (await rt.store.readEvents({ runId: run.id, limit: 100 })).map((e) => e.type);
    expect(types.filter((t) => t === 'attempt:started')).toHaveLength(2);
    expect(types).toContain('step:replayed');
    const suspended = await eventOf(rt, 'attempt:suspended', run.id);
    expect(suspended.data.waits).toEqual([
      { kind: 'timer', key: 'baton:sleep:1', until: new Date(start + 2 * HOUR).toISOString() },
    ]);
  });

  it('sleepUntil a moment; the wake time is fixed at the first call, and a past moment returns at once', async () => {
    rt = testRuntime({ worker });
    const wakeAt = Date.parse('2026-11-23T09:00:00Z');
    const seen: number[] = [];
    const t = defineTask({
      name: 'until',
      run: async (_: unknown, ctx) => {
        await ctx.sleepUntil(new Date('2020-01-01T00:00:00Z'));
        await ctx.sleepUntil(new Date(wakeAt));
        seen.push(ctx.clock.now());
        await ctx.sleep(0);
        return 'morning';
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    expect((await rt.baton.getRun(run.id))?.wakeAt).toBe(wakeAt);
    await rt.clock.advance(wakeAt - rt.clock.now());
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'morning' });
    expect(seen).toEqual([wakeAt]);
  });

  it('two sleeps in a row: each suspends once, and each wakes at its own time', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'twice',
      run: async (_: unknown, ctx) => {
        await ctx.sleep('10m');
        await ctx.sleep('5m', { key: 'second' });
        return ctx.attempt;
      },
    });
    const start = rt.clock.now();
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.clock.advance(10 * 60_000);
    await eventOf(rt, 'attempt:suspended', run.id, 2);
    expect((await rt.baton.getRun(run.id))?.wakeAt).toBe(start + 15 * 60_000);
    const steps = (await rt.store.getSteps(run.id)).map((s) => s.key).sort();
    expect(steps).toEqual(['baton:sleep:1', 'baton:sleep:second']);
    await rt.clock.advance(5 * 60_000);
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 3 });
  });

  it('a sleep does not count against the attempt timeout', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'short-attempts',
      timeout: '1s',
      run: async (_: unknown, ctx) => {
        await ctx.sleep('1h');
        return 'ok';
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.clock.advance(HOUR);
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'ok' });
  });

  it('refuses a sleep that would outlast the run budget, and bad durations, naming what was expected', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'too-long',
      budget: '10m',
      run: async (_: unknown, ctx) => {
        await ctx.sleep('1h');
        return 'never';
      },
    });
    const run = await rt.baton.start(t, {});
    const out = await run.result();
    expect(out.status).toBe('failed');
    expect(isBatonError(out.error, 'INVALID_OPTION')).toBe(true);
    expect(out.error?.message).toMatch(/ctx\.sleep until .* would wake after the run's time budget ends/);

    const bad = defineTask({
      name: 'bad-sleep',
      run: async (_: unknown, ctx) => {
        try {
          await ctx.sleep('soon');
        } catch (err) {
          return isBatonError(err, 'INVALID_OPTION') ? (err as Error).message : 'other';
        }
        return 'slept';
      },
    });
    const r2 = await rt.baton.start(bad, {});
    expect((await r2.result()).output).toMatch(/ctx\.sleep duration must be/);
  });

  it('ctx.delay still waits inside the attempt and is cut off by its timeout', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'delay',
      timeout: '1s',
      retry: { maxRetries: 0 },
      run: async (_: unknown, ctx) => {
        await ctx.delay(HOUR);
        return 'late';
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(2_100);
    const ended = await eventOf(rt, 'attempt:timed_out', run.id);
    expect(ended.data.timeoutMs).toBe(1_000);
  });

  it('a cancelled sleeping run never wakes', async () => {
    rt = testRuntime({ worker });
    let woke = false;
    const t = defineTask({
      name: 'cancel-me',
      run: async (_: unknown, ctx) => {
        await ctx.sleep('1h');
        woke = true;
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.baton.cancel(run.id);
    await rt.clock.advance(2 * HOUR);
    expect((await rt.baton.getRun(run.id))?.status).toBe('cancelled');
    expect(woke).toBe(false);
  });
});
