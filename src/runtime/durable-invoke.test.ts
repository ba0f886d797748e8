import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHttpHandler } from '../http/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const HOUR = 3_600_000;
const worker = { pollMs: HOUR, leaseMs: HOUR };

describe('ctx.invoke (durable child runs)', () => {
  it('runs two children in parallel while the parent waits without a slot, then hands back their outcomes; a replay starts no second child', async () => {
    rt = testRuntime({ worker: { ...worker, concurrency: 2 } });
    const starts: string[] = [];
    const double = defineTask({
      name: 'double',
      input: z.object({ n: z.number() }),
      run: async ({ n }, ctx) => {
        starts.push(ctx.runId);
        await ctx.sleep('1m');
        return n * 2;
      },
    });
    let parentBodies = 0;
    const parent = defineTask({
      name: 'parent',
      run: async (_: unknown, ctx) => {
        parentBodies++;
        const [a, b] = await Promise.all([ctx.invoke(double, { n: 1 }), ctx.invoke(double, { n: 20 })]);
        if (a.status !== 'succeeded' || b.status !== 'succeeded') return { failed: true };
        const sum: number = a.output + b.output;
        return { sum, ids: [a.runId, b.runId] };
      },
    });
    const run = await rt.baton.start(parent, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    const waiting = await rt.baton.getRun(run.id);
    expect(waiting).toMatchObject({ status: 'waiting', waitReason: 'child', leaseOwner: null });
    const children = await rt.baton.listRuns({ parentId: run.id });
    expect(children.map((c) => c.id).sort()).toEqual([`${run.id}:invoke-1`, `${run.id}:invoke-2`]);
    expect(children.every((c) => c.rootId === run.id && c.name === 'double')).toBe(true);
    // Both children hold the two slots in turn while the parent waits.
    await eventOf(rt, 'attempt:suspended', `${run.id}:invoke-1`);
    await eventOf(rt, 'attempt:suspended', `${run.id}:invoke-2`);
    await rt.clock.advance(60_000);
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { sum: 42 } });
    // The parent body ran: first, then woken by the first child's end, then by the second's
    // (or once if both ended in one turn); never a third child.
    expect(parentBodies).toBeGreaterThanOrEqual(2);
    expect(await rt.baton.listRuns({ parentId: run.id })).toHaveLength(2);
    expect(new Set(starts).size).toBe(2);
    const created = await rt.store.readEvents({ rootId: run.id, limit: 1000 });
    expect(created.filter((e) => e.type === 'run:created')).toHaveLength(3);
    const woken = created.filter((e) => e.type === 'run:queued' && e.runId === run.id);
    expect(woken.some((e) => (e.data as { reason: string }).reason === 'woken')).toBe(true);
    // The HTTP API shows them as the parent's children.
    const http = createHttpHandler(rt.baton);
    const res = await http(new Request(`http://baton.test/runs/${run.id}`));
    const body = (await res.json()) as { children: Array<{ id: string; status: string }> };
    expect(body.children.map((c) => [c.id, c.status]).sort()).toEqual([
      [`${run.id}:invoke-1`, 'succeeded'],
      [`${run.id}:invoke-2`, 'succeeded'],
    ]);
  });

  it('hands back a failed child as a failed outcome, not an exception', async () => {
    rt = testRuntime({ worker });
    const broken = defineTask({
      name: 'broken',
      retry: false,
      run: async () => {
        throw new Error('no such page');
      },
    });
    const parent = defineTask({
      name: 'parent-of-broken',
      run: async (_: unknown, ctx) => {
        const r = await ctx.invoke(broken, {});
        if (r.status === 'succeeded' || r.status === 'partial') return r.status;
        return `${r.status}: ${r.error.message}`;
      },
    });
    const run = await rt.baton.start(parent, {});
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'failed: no such page' });
  });

  it('cancelling the parent cancels its children, at any depth', async () => {
    rt = testRuntime({ worker });
    const leaf = defineTask({ name: 'leaf', run: async (_: unknown, ctx) => ctx.sleep('1h') });
    const middle = defineTask({ name: 'middle', run: async (_: unknown, ctx) => ctx.invoke(leaf, {}) });
    const top = defineTask({ name: 'top', run: async (_: unknown, ctx) => ctx.invoke(middle, {}) });
    const run = await rt.baton.start(top, {});
    const leafId = `${run.id}:invoke-1:invoke-1`;
    await eventOf(rt, 'attempt:suspended', leafId);
    expect((await rt.baton.getRun(`${run.id}:invoke-1`))?.waitReason).toBe('child');
    await rt.baton.cancel(run.id);
    for (const id of [run.id, `${run.id}:invoke-1`, leafId])
      expect((await rt.baton.getRun(id))?.status).toBe('cancelled');
    await rt.clock.advance(2 * HOUR);
    expect((await rt.baton.getRun(leafId))?.status).toBe('cancelled');
  });

  it("gives the child a share of the parent's remaining budget, and refuses a share without one", async () => {
    rt = testRuntime({ worker });
    const child = defineTask({ name: 'child', run: async () => 'ok' });
    const parent = defineTask({
      name: 'budgeted',
      budget: '10m',
      run: async (_: unknown, ctx) => ctx.invoke(child, {}, { budgetShare: 0.5 }),
    });
    const run = await rt.baton.start(parent, {});
    expect((await run.result()).status).toBe('succeeded');
    expect((await rt.baton.getRun(`${run.id}:invoke-1`))?.budgetMs).toBe(5 * 60_000);

    const unbudgeted = defineTask({
      name: 'unbudgeted',
      run: async (_: unknown, ctx) => ctx.invoke(child, {}, { budgetShare: 0.5 }),
    });
    const r2 = await rt.baton.start(unbudgeted, {});
    const out = await r2.result();
    expect(out.status).toBe('failed');
    expect(out.error?.message).toMatch(/budgetShare needs a parent with a time budget/);
  });
});
