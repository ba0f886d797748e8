/**
 * Tasks for the durable-primitives crash test. Every step body appends one line to the log named by
 * BATON_DURABLE_LOG (O_APPEND, short lines), so the test can count how often each body ran.
 */
import { appendFileSync } from 'node:fs';
import { defineTask } from '../../src/index.ts';

const write = (line: string) => {
  const log = process.env.BATON_DURABLE_LOG;
  if (log) appendFileSync(log, `${line}\n`);
};

export const sleeper = defineTask({
  name: 'durable-sleeper',
  run: async (input: { ms: number }, ctx) => {
    const before = await ctx.step('before', () => {
      write(`exec ${ctx.runId} before ${process.pid}`);
      return ctx.clock.now();
    });
    await ctx.sleep(input.ms);
    const after = await ctx.step('after', () => {
      write(`exec ${ctx.runId} after ${process.pid}`);
      return ctx.clock.now();
    });
    return { before, after };
  },
});

export const child = defineTask({
  name: 'durable-child',
  run: async (input: { n: number }, ctx) => {
    await ctx.step('a', () => {
      write(`exec ${ctx.runId} a ${process.pid}`);
    });
    // The worker is killed here, while the child runs and its parent waits.
    await ctx.delay(1_500);
    await ctx.step('b', () => {
      write(`exec ${ctx.runId} b ${process.pid}`);
    });
    return input.n * 2;
  },
});

export const parent = defineTask({
  name: 'durable-parent',
  run: async (_input: unknown, ctx) => {
    await ctx.step('pre', () => {
      write(`exec ${ctx.runId} pre ${process.pid}`);
    });
    const r = await ctx.invoke(child, { n: 21 });
    await ctx.step('post', () => {
      write(`exec ${ctx.runId} post ${process.pid}`);
    });
    return r.status === 'succeeded' ? r.output : r.status;
  },
});

export const approver = defineTask({
  name: 'durable-approver',
  run: async (_input: unknown, ctx) => {
    await ctx.step('asked', () => {
      write(`exec ${ctx.runId} asked ${process.pid}`);
    });
    const r = await ctx.waitFor<{ ok: boolean }>('approve');
    await ctx.step('after', () => {
      write(`exec ${ctx.runId} after ${process.pid}`);
    });
    return r.status === 'received' ? r.payload : 'timeout';
  },
});

export const tasks = [sleeper, child, parent, approver];
