import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isBatonError } from '../core/index.ts';
import { createHttpHandler } from '../http/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const HOUR = 3_600_000;
const worker = { pollMs: HOUR, leaseMs: HOUR };
const Approval = z.object({ approved: z.boolean(), by: z.string() });

describe('ctx.waitFor + baton.signal', () => {
  it('waits without a slot, wakes on the signal, gets the typed payload exactly once', async () => {
    rt = testRuntime({ worker });
    let bodies = 0;
    const t = defineTask({
      name: 'approval',
      run: async (_: unknown, ctx) => {
        bodies++;
        const r = await ctx.waitFor('approve', { schema: Approval });
        if (r.status === 'timeout') return 'no answer';
        const by: string = r.payload.by;
        const again = await ctx.waitFor('approve', { timeout: '1m' });
        return { approved: r.payload.approved, by, second: again.status };
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    expect(await rt.baton.getRun(run.id)).toMatchObject({
      status: 'waiting',
      waitReason: 'signal',
      leaseOwner: null,
    });
    await rt.baton.signal(run.id, 'approve', { approved: true, by: 'ada' });
    // The second wait finds no second signal: the first was read once. It times out after a minute.
    await eventOf(rt, 'attempt:suspended', run.id, 2);
    await rt.clock.advance(60_000);
    expect(await run.result()).toMatchObject({
      status: 'succeeded',
      output: { approved: true, by: 'ada', second: 'timeout' },
    });
    const signals = await rt.store.listSignals(run.id);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.readKey).toBe('baton:signal:1');
    expect(bodies).toBe(3);
  });

  it('keeps a signal sent before the wait until it is read', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'late-reader',
      run: async (_: unknown, ctx) => {
        await ctx.sleep('10m');
        const r = await ctx.waitFor<{ n: number }>('go');
        return r.status === 'received' ? r.payload.n : -1;
      },
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.baton.signal(run.id, 'go', { n: 7 });
    await rt.clock.advance(10 * 60_000);
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 7 });
  });

  it('resolves a typed timeout when nothing comes in time', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'impatient',
      run: async (_: unknown, ctx) => {
        const r = await ctx.waitFor('approve', { timeout: '2h' });
        return r.status === 'timeout' ? { timedOutAt: r.timedOutAt } : 'got it';
      },
    });
    const start = rt.clock.now();
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.clock.advance(2 * HOUR);
    expect(await run.result()).toMatchObject({
      status: 'succeeded',
      output: { timedOutAt: start + 2 * HOUR },
    });
  });

  it('fails the run naming the field when the payload does not match the schema', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'strict',
      run: async (_: unknown, ctx) => ctx.waitFor('approve', { schema: Approval }),
    });
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    await rt.baton.signal(run.id, 'approve', { approved: 'yes', by: 'ada' });
    const out = await run.result();
    expect(out.status).toBe('failed');
    expect(out.error?.message).toMatch(/signal "approve" .*payload\.approved/);
  });

  it('refuses bad names, unknown runs and ended runs, storing nothing', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({ name: 'quick', run: async () => 1 });
    const run = await rt.baton.start(t, {});
    await run.result();
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (err: unknown) => (isBatonError(err) ? err.code : String(err)),
      );
    expect(await codeOf(rt.baton.signal(run.id, 'approve'))).toBe('RUN_CONFLICT');
    expect(await codeOf(rt.baton.signal('nope', 'approve'))).toBe('RUN_NOT_FOUND');
    expect(await codeOf(rt.baton.signal(run.id, 'no spaces'))).toBe('INVALID_INPUT');
    expect(await rt.store.listSignals(run.id)).toEqual([]);
  });

  it('takes signals over HTTP: POST /runs/:id/signals/:name with the payload as body', async () => {
    rt = testRuntime({ worker });
    const t = defineTask({
      name: 'http-wait',
      run: async (_: unknown, ctx) => {
        const r = await ctx.waitFor('approve', { schema: Approval });
        return r.status === 'received' ? r.payload : null;
      },
    });
    rt.baton.register(t);
    const http = createHttpHandler(rt.baton);
    const run = await rt.baton.start(t, {});
    await eventOf(rt, 'attempt:suspended', run.id);
    const post = (path: string, body: string) =>
      http(
        new Request(`http://baton.test${path}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        }),
      );
    const bad = await post(`/runs/${run.id}/signals/bad%20name`, '{}');
    expect(bad.status).toBe(400);
    const res = await post(`/runs/${run.id}/signals/approve`, JSON.stringify({ approved: true, by: 'http' }));
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ success: true, signal: { runId: run.id, name: 'approve' } });
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: { approved: true, by: 'http' } });
    const gone = await post(`/runs/${run.id}/signals/approve`, '{}');
    expect(gone.status).toBe(409);
  });
});
