import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isBatonError } from '../core/index.ts';
import { eventOf, nextEvent, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    return isBatonError(err) ? err.code : String(err);
  }
  return undefined;
}

describe('runs', () => {
  it('runs a task to success and logs its life as events', async () => {
    rt = testRuntime();
    const hello = defineTask({
      name: 'hello',
      input: z.object({ who: z.string() }),
      run: async ({ who }) => ({ greeting: `hello ${who}` }),
    });
    const run = await rt.baton.start(hello, { who: 'ada' });
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { greeting: 'hello ada' } });
    const types: string[] = [];
    for await (const e of run.events()) types.push(e.type);
    expect(types).toEqual([
      'run:created',
      'run:queued',
      'attempt:started',
      'attempt:succeeded',
      'run:succeeded',
    ]);
  });

  it('refuses an input that fails its schema, naming the field, and stores nothing', async () => {
    rt = testRuntime();
    const t = defineTask({
      name: 't',
      input: z.object({ topic: z.string(), n: z.number().int() }),
      run: async () => 1,
    });
    const err = await rt.baton.start(t, { topic: 3, n: 1.5 } as never).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_INPUT')).toBe(true);
    expect((err as Error).message).toMatch(/input\.topic: .*expected string/);
    expect((err as Error).message).toMatch(/input\.n: /);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('never runs a memoized step again, and resumes from the last checkpoint after a failure', async () => {
    rt = testRuntime();
    const executed: string[] = [];
    let seenCheckpoint: unknown;
    const t = defineTask({
      name: 'steps',
      retry: { timeoutMultipliers: [2], backoff: ['5s'] },
      run: async (_: unknown, ctx) => {
        seenCheckpoint ??= ctx.lastCheckpoint?.state;
        const a = await ctx.step('a', () => {
          executed.push('a');
          return { n: 1 };
        });
        await ctx.checkpoint({ after: 'a', n: a.n }, { itemsAnalyzed: 1, itemsTotal: 2 });
        const b = await ctx.step('b', () => {
          executed.push('b');
          return 2;
        });
        if (ctx.attempt === 1) throw new Error('flaky network');
        return a.n + b;
      },
    });
    const run = await rt.baton.start(t, {});
    await nextEvent(rt, 'run:waiting', run.id);
    seenCheckpoint = undefined;
    await rt.clock.advance(5_000);
    const out = await run.result();
    expect(out.output).toBe(3);
    expect(executed).toEqual(['a', 'b']);
    expect(seenCheckpoint).toEqual({ after: 'a', n: 1 });
    const types = (await rt.store.readEvents({ runId: run.id })).map((e) => e.type);
    expect(types).toContain('step:replayed');
    expect(types.filter((t) => t === 'attempt:started').length).toBe(2);
  });

  it('cuts off a task that ignores its signal at the deadline and fences its late writes', async () => {
    rt = testRuntime();
    let lateWrite: unknown;
    const stubborn = defineTask({
      name: 'stubborn',
      timeout: '60s',
      grace: '1s',
      retry: false,
      run: async (_: unknown, ctx) => {
        await ctx.partial({ claim: 'found early' });
        await new Promise((r) => ctx.clock.setTimer(120_000, () => r(undefined)));
        lateWrite = await ctx.step('late', () => 'should not be recorded').catch((e: unknown) => e);
        return 'too late';
      },
    });
    const run = await rt.baton.start(stubborn, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(61_000);
    const out = await run.result();
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({
      status: 'timeout',
      partial: true,
      findings: [{ claim: 'found early' }],
      search_exhausted: false,
      timeout_duration_seconds: 60,
    });
    await rt.clock.advance(60_000);
    expect(isBatonError(lateWrite, 'LEASE_LOST')).toBe(true);
    expect(await rt.store.getSteps(run.id)).toEqual([]);
  });

  it('starts fresh with an event when the checkpoint is from another task version', async () => {
    rt = testRuntime();
    const v1 = defineTask({
      name: 'versioned',
      retry: false,
      run: async (_: unknown, ctx) => {
        await ctx.checkpoint({ old: true });
        throw new Error('stop');
      },
    });
    const first = await rt.baton.start(v1, {}, { id: 'run-v' });
    expect((await first.result()).status).toBe('failed');
    await rt.baton.close();
    const { createBaton } = await import('./baton.ts');
    let seen: unknown = 'unset';
    const v2 = defineTask({
      name: 'versioned',
      version: 2,
      run: async (_: unknown, ctx) => {
        seen = ctx.lastCheckpoint;
        return 'ok';
      },
    });
    const baton2 = createBaton({ store: rt.store, clock: rt.clock, tasks: [v2] });
    const again = await baton2.resume('run-v');
    expect((await again.result()).output).toBe('ok');
    expect(seen).toBeUndefined();
    const invalid = (await rt.store.readEvents({ runId: 'run-v' })).find(
      (e) => e.type === 'checkpoint:invalid',
    );
    expect(invalid?.data).toMatchObject({ reason: expect.stringMatching(/version 1 .* now version 2/) });
    await baton2.close();
  });

  it('returns the stored result when resuming a succeeded run, without running it', async () => {
    rt = testRuntime();
    let calls = 0;
    const t = defineTask({ name: 'once', run: async () => ++calls });
    const run = await rt.baton.start(t, {});
    await run.result();
    const again = await rt.baton.resume(run.id);
    expect(again.resumed.action).toBe('already_succeeded');
    expect((await again.result()).output).toBe(1);
    expect(calls).toBe(1);
  });

  it('refuses to resume a run held by a live worker elsewhere, naming the holder', async () => {
    rt = testRuntime({ worker: false });
    const t = defineTask({ name: 'held', run: async () => 1 });
    rt.baton.register(t);
    const run = await rt.baton.start(t, {});
    await rt.store.claimRuns({ owner: 'other-host/42/abc', leaseMs: 5_000, limit: 1, names: ['held'] });
    const err = await rt.baton.resume(run.id).catch((e: unknown) => e);
    expect(isBatonError(err, 'RUN_CONFLICT')).toBe(true);
    expect((err as Error).message).toMatch(/held by other-host\/42\/abc/);
    await rt.clock.advance(5_001);
    const taken = await rt.baton.resume(run.id);
    expect(taken.resumed.action).toBe('taken_back');
  });

  it('recovers a run whose worker stopped heartbeating once the lease expires', async () => {
    rt = testRuntime({ worker: { leaseMs: 3_000 } });
    const t = defineTask({ name: 'orphan', run: async () => 'done' });
    rt.baton.register(t);
    await rt.baton.ready();
    await rt.store.createRuns([{ id: 'o1', kind: 'task', name: 'orphan', input: {}, status: 'queued' }], []);
    await rt.store.claimRuns({ owner: 'far-away/1/x', leaseMs: 3_000, limit: 1, names: ['orphan'] });
    await rt.clock.advance(3_500);
    const out = await rt.baton.result('o1');
    expect(out.output).toBe('done');
    const types = (await rt.store.readEvents({ runId: 'o1' })).map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['lease:recovered', 'run:queued']);
  });

  it('cancels a running attempt through its signal', async () => {
    rt = testRuntime();
    const t = defineTask({ name: 'long', run: async (_: unknown, ctx) => ctx.delay(3_600_000) });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:started', run.id);
    await run.cancel('user changed their mind');
    const out = await run.result();
    expect(out.status).toBe('cancelled');
    await rt.baton.worker?.idle();
    expect(rt.baton.worker?.running).toBe(0);
  });

  it('reports unknown ids', async () => {
    rt = testRuntime();
    expect(await codeOf(rt.baton.resume('run_nope'))).toBe('RUN_NOT_FOUND');
    expect(await codeOf(rt.baton.result('run_nope'))).toBe('RUN_NOT_FOUND');
  });
});

describe('flows', () => {
  it('runs steps after their dependencies and hands them the outputs', async () => {
    rt = testRuntime();
    const order: string[] = [];
    const count = defineTask({
      name: 'count',
      input: z.object({ text: z.string() }),
      run: async ({ text }) => {
        order.push(text);
        return text.split(' ').length;
      },
    });
    const sum = defineTask({
      name: 'sum',
      run: async (_: unknown, ctx) => {
        order.push('sum');
        return Object.values(ctx.dependencies).reduce((acc, d) => acc + (d.output as number), 0);
      },
    });
    const flow = defineFlow({
      name: 'words',
      output: 'total',
      steps: [
        { id: 'a', task: count, input: { text: 'one two' } },
        { id: 'b', task: count, input: (i: { text: string }) => ({ text: i.text }) },
        { id: 'total', task: sum, dependsOn: ['a', 'b'] },
      ],
    });
    const run = await rt.baton.start(flow, { text: 'three four five' });
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: 5 });
    expect(order.at(-1)).toBe('sum');
  });

  it('refuses a plan with a cycle, a dangling edge and a bad input all at once', async () => {
    rt = testRuntime();
    const t = defineTask({ name: 'num', input: z.object({ n: z.number() }), run: async () => 1 });
    rt.baton.register(t);
    const { loadPlan } = await import('./define-flow.ts');
    const plan = loadPlan({
      plan: {
        steps: [
          { aiName: 'num', draftArgs: { n: 1 }, dependsOn: [1] },
          { aiName: 'num', draftArgs: { n: 'x' }, dependsOn: [0, 7] },
          { aiName: 'ghost' },
        ],
      },
    });
    const err = await rt.baton.start(plan, {}).catch((e: unknown) => e);
    expect(isBatonError(err, 'PLAN_INVALID')).toBe(true);
    const kinds = (err as { data: { problems: Array<{ kind: string }> } }).data.problems
      .map((p) => p.kind)
      .sort();
    expect(kinds).toEqual(['bad_input', 'cycle', 'dangling', 'unknown_task']);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('reopens a failed flow on resume and finishes it without redoing finished steps', async () => {
    rt = testRuntime();
    let failing = true;
    const calls: string[] = [];
    const ok = defineTask({
      name: 'ok',
      run: async (_: unknown, ctx) => {
        calls.push(ctx.stepId ?? '');
        return 1;
      },
    });
    const flaky = defineTask({
      name: 'flaky',
      retry: false,
      run: async () => {
        calls.push('flaky');
        if (failing) throw new Error('down');
        return 2;
      },
    });
    const flow = defineFlow({
      name: 'f',
      steps: [
        { id: 'a', task: ok },
        { id: 'b', task: flaky, dependsOn: ['a'] },
        { id: 'c', task: ok, dependsOn: ['b'] },
      ],
    });
    const run = await rt.baton.start(flow, {});
    expect((await run.result()).status).toBe('failed');
    failing = false;
    const again = await rt.baton.resume(run.id);
    expect(again.resumed.action).toBe('reopened');
    const out = await again.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { a: 1, b: 2, c: 1 } });
    expect(calls).toEqual(['a', 'flaky', 'flaky', 'c']);
  });
});
