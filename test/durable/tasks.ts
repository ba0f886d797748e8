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

export const tasks = [sleeper];
