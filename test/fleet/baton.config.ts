/**
 * The project every process of the Postgres fleet test loads (`baton worker` and `baton serve` run
 * in this directory): a checkpointing task and a scheduled tool whose results go to a webhook.
 * FLEET_LOG names a file each process appends one short line to (O_APPEND: lines never interleave)
 * when an attempt begins and ends, a step has committed and a checkpoint has committed;
 * FLEET_HOOK is the webhook's URL (the test's receiver).
 */
import { appendFileSync } from 'node:fs';
import { defineConfig, defineTask, defineTool, SCHEDULE_JSON_SCHEMA } from '../../src/index.ts';

export const STEPS = 6;
export const CHECKPOINT_EVERY = 2;

const log = (line: string) => {
  if (process.env.FLEET_LOG) appendFileSync(process.env.FLEET_LOG, `${Date.now()} ${process.pid} ${line}\n`);
};

interface Progress {
  i: number;
  sum: number;
}

/** Six memoized steps with a checkpoint every two; its output is 15 × k whichever workers ran it. */
export const fleet = defineTask({
  name: 'fleet',
  // A run may be cut by many kills; each takeover is an attempt.
  retry: { timeoutMultipliers: Array.from({ length: 30 }, () => 1), backoff: [0] },
  // stepMs: how long each step works (5 ms unless told); the wave the test terminates sessions
  // under asks for longer, so runs are still mid-way however fast the first ones go.
  run: async (input: { k: number; stepMs?: number }, ctx) => {
    const from = (ctx.lastCheckpoint?.state as Progress | undefined) ?? { i: 0, sum: 0 };
    log(`begin ${ctx.runId} ${ctx.attempt} ${from.i}`);
    try {
      let sum = from.sum;
      for (let i = from.i; i < STEPS; i++) {
        sum += await ctx.step(`s${i}`, async () => {
          await ctx.delay((input.stepMs ?? 5) + Math.floor(Math.random() * 10));
          return input.k * i;
        });
        log(`committed ${ctx.runId} s${i}`);
        if ((i + 1) % CHECKPOINT_EVERY === 0) {
          const seq = await ctx.checkpoint({ i: i + 1, sum });
          log(`ckpt ${ctx.runId} ${seq} ${i + 1} ${sum}`);
        }
      }
      return { sum };
    } finally {
      log(`end ${ctx.runId}`);
    }
  },
});

export const notify = defineTool({
  name: 'notify',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['text'],
  },
  handler: async (args: { text: string }) => ({ said: args.text }),
});

export default defineConfig({
  tasks: [fleet, notify],
  delivery: {
    webhooks: {
      hook: {
        url: process.env.FLEET_HOOK ?? 'http://127.0.0.1:9/unset',
        allowPrivateNetwork: true,
        timeout: '2s',
        retry: { base: '200ms' },
      },
    },
  },
});
