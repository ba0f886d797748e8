/**
 * The chaos test's flow: a → (b, c) → d, each step a task that memoizes three steps with a short
 * delay between them and logs, to the file named by CHAOS_LOG, when a step body runs and when its
 * record has committed (O_APPEND, one short line per write, so processes never interleave a line).
 */
import { appendFileSync } from 'node:fs';
import { defineFlow, defineTask } from '../../src/index.ts';

export const STEPS_PER_TASK = 4;
export const FLOW_STEPS = ['a', 'b', 'c', 'd'] as const;

const log = process.env.CHAOS_LOG;
const write = (line: string) => {
  if (log) appendFileSync(log, `${line}\n`);
};

export const chaosStep = defineTask({
  name: 'chaos-step',
  // Generous retries without backoff: a worker killed or starved of disk mid-attempt is retried.
  retry: { timeoutMultipliers: Array.from({ length: 12 }, () => 1), backoff: [0] },
  timeout: '20s',
  run: async (input: { part: string }, ctx) => {
    let sum = 0;
    for (let i = 0; i < STEPS_PER_TASK; i++) {
      const key = `k${i}`;
      const got = await ctx.step(key, async () => {
        write(`exec ${ctx.runId} ${key} ${process.pid}`);
        await ctx.delay(40 + Math.floor(Math.random() * 40));
        return { i, by: process.pid };
      });
      write(`committed ${ctx.runId} ${key} ${process.pid}`);
      sum += got.i;
    }
    return { part: input.part, sum };
  },
});

export const chaosFlow = defineFlow({
  name: 'chaos-flow',
  steps: [
    { id: 'a', task: chaosStep, input: { part: 'a' } },
    { id: 'b', task: chaosStep, input: { part: 'b' }, dependsOn: ['a'] },
    { id: 'c', task: chaosStep, input: { part: 'c' }, dependsOn: ['a'] },
    { id: 'd', task: chaosStep, input: { part: 'd' }, dependsOn: ['b', 'c'] },
  ],
});
