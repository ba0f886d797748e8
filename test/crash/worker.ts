/**
 * A worker process for the crash test. It executes `crash-work` runs from the shared database and
 * appends what it does to a log file (O_APPEND, one short line per write, so lines from two
 * processes never interleave): when a step body runs, when a step's record has committed, when a
 * checkpoint has committed, and when an attempt begins and ends.
 */
import { appendFileSync } from 'node:fs';
import { createBaton, defineTask } from '../../src/index.ts';
import { openSqliteStore } from '../../src/store/index.ts';

const [db, log, concurrency] = process.argv.slice(2) as [string, string, string];
const pid = process.pid;
const write = (line: string) => appendFileSync(log, `${line}\n`);

export const STEPS = 12;
export const CHECKPOINT_EVERY = 3;

const work = defineTask({
  name: 'crash-work',
  retry: { timeoutMultipliers: [1, 1, 1, 1], backoff: [0] },
  run: async (_input: unknown, ctx) => {
    const from = (ctx.lastCheckpoint?.state as { i: number } | undefined)?.i ?? 0;
    write(`begin ${ctx.runId} ${pid} ${ctx.attempt} ${from}`);
    try {
      for (let i = from; i < STEPS; i++) {
        const key = `s${i}`;
        await ctx.step(key, async () => {
          write(`exec ${ctx.runId} ${key} ${pid}`);
          await ctx.delay(20 + Math.floor(Math.random() * 15));
          return { i, by: pid };
        });
        write(`committed ${ctx.runId} ${key} ${pid}`);
        if ((i + 1) % CHECKPOINT_EVERY === 0) {
          const seq = await ctx.checkpoint({ i: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: STEPS });
          write(`ckpt ${ctx.runId} ${seq} ${i + 1} ${pid}`);
        }
      }
      return { done: true };
    } finally {
      write(`end ${ctx.runId} ${pid}`);
    }
  },
});

const store = openSqliteStore(db);
const baton = createBaton({
  store,
  tasks: [work],
  worker: { concurrency: Number(concurrency), leaseMs: 2_000, pollMs: 50 },
});
await baton.ready();
write(`ready ${pid}`);
process.on('SIGTERM', () => {
  void baton.close().then(() => process.exit(0));
});
