/** Issue 12 item 7: automatic checkpoints carry progress_percentage once the task reported a total. */
import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

async function records(runId: string) {
  return (await rt.store.listCheckpoints(runId)).map(
    (c) => c.record as { progress_percentage: number | null },
  );
}

describe('progress_percentage on automatic checkpoints', () => {
  it('follows the total given to ctx.checkpoint into the checkpoints ctx.tool takes', async () => {
    rt = testRuntime();
    const task = defineTask({
      name: 'reader',
      run: async (_: unknown, ctx) => {
        await ctx.checkpoint({ next: 1 }, { itemsAnalyzed: 1, itemsTotal: 4 });
        await ctx.tool('search', () => 'hits'); // before_tool, 1 of 4
        await ctx.checkpoint({ next: 3 }, { itemsAnalyzed: 3 }); // the total is still known
        await ctx.tool('deep_analysis', () => 'insight', { cheap: () => 'summary' }); // 3 of 4
        return 'done';
      },
    });
    const run = await rt.baton.start(task, {});
    expect((await run.result()).status).toBe('succeeded');
    expect((await records(run.id)).map((r) => r.progress_percentage)).toEqual([25, 25, 75, 75]);
    const saved = (await rt.store.readEvents({ runId: run.id })).filter((e) => e.type === 'checkpoint:saved');
    expect(saved.map((e) => (e.data as { progressPercentage: unknown }).progressPercentage)).toEqual([
      25, 25, 75, 75,
    ]);
  });

  it('takes the total from ctx.progress(done, total) as well, and stays null when none was reported', async () => {
    rt = testRuntime();
    const task = defineTask({
      name: 'counter',
      run: async (_: unknown, ctx) => {
        await ctx.tool('search', () => 'hits'); // nothing reported yet
        ctx.progress(2, 8);
        await ctx.tool('search', () => 'hits');
        return 'done';
      },
    });
    const run = await rt.baton.start(task, {});
    expect((await run.result()).status).toBe('succeeded');
    expect((await records(run.id)).map((r) => r.progress_percentage)).toEqual([null, 25]);
  });
});
