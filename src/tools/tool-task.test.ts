import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTool, loadToolsDir } from './index.ts';

/** Tools are tasks: a real Baton (SQLite file, manual clock) runs them with timeouts and retries. */

const FIXTURES = join(import.meta.dirname, 'fixtures');
const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

async function eventTypes(runId: string): Promise<string[]> {
  return (await rt.store.readEvents({ runId, limit: 1_000 })).map((e) => e.type);
}

describe('a tool as a task', () => {
  it('runs a tool loaded from its config.json to success', async () => {
    rt = testRuntime();
    const [draw] = await loadToolsDir(FIXTURES);
    const run = await rt.baton.start(draw as NonNullable<typeof draw>, { prompt: 'a lighthouse at dusk' });
    const out = await run.result();
    expect(out.status).toBe('succeeded');
    expect(out.output).toMatchObject({ args: { prompt: 'a lighthouse at dusk' } });
  });

  it('takes the schedule off a scheduled call: neither the stored input nor the handler has it', async () => {
    rt = testRuntime();
    const [draw] = await loadToolsDir(FIXTURES);
    const run = await rt.baton.start(draw as NonNullable<typeof draw>, {
      prompt: 'p',
      schedule: 'in 2 minutes',
    });
    expect((await rt.baton.getRun(run.id))?.input).toEqual({ prompt: 'p' });
    await eventOf(rt, 'attempt:succeeded', run.id);
    await rt.clock.advance(120_000);
    const out = await run.result();
    expect(out.status).toBe('succeeded');
    expect(out.output).toMatchObject({ args: { prompt: 'p' } });
  });

  it('refuses bad arguments and a schedule the tool did not opt into before storing anything', async () => {
    rt = testRuntime();
    const tools = await loadToolsDir(FIXTURES);
    const repo = tools.find((t) => t.name === 'repo_info') as NonNullable<(typeof tools)[number]>;
    const bad = await rt.baton.start(repo, { owner: 'nodejs' }).catch((e: unknown) => e);
    expect(isBatonError(bad, 'INVALID_INPUT')).toBe(true);
    const scheduled = await rt.baton
      .start(repo, { owner: 'nodejs', repo: 'node', schedule: 'in 2 minutes' })
      .catch((e: unknown) => e);
    expect(isBatonError(scheduled, 'SCHEDULE_NOT_SUPPORTED')).toBe(true);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('ends at its timeout without a retry by default', async () => {
    rt = testRuntime();
    let calls = 0;
    const slow = defineTool({
      name: 'slow_tool',
      inputSchema: schema,
      timeout: '60s',
      grace: '1s',
      handler: async (_args, ctx) => {
        calls++;
        await ctx.delay(120_000);
        return 'too late';
      },
    });
    const run = await rt.baton.start(slow, { q: 'x' });
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(61_000);
    const out = await run.result();
    expect(out.status).not.toBe('succeeded');
    // Delivered at once: the run is over at the deadline, with no backoff wait in between.
    expect((out.run.finishedAt as number) - (out.run.startedAt as number)).toBeLessThanOrEqual(61_000);
    const types = await eventTypes(run.id);
    expect(types).toContain('attempt:timed_out');
    expect(types).not.toContain('attempt:retrying');
    expect(calls).toBe(1);
  });

  it('retries like any task when asked, after a durable backoff', async () => {
    rt = testRuntime();
    const seen: unknown[] = [];
    const flaky = defineTool({
      name: 'flaky_tool',
      inputSchema: schema,
      retry: { maxRetries: 1, backoff: ['5s'] },
      handler: async (args, ctx) => {
        seen.push(args);
        if (ctx.attempt === 1) throw new Error('upstream hiccup');
        return { answer: args.q };
      },
    });
    const run = await rt.baton.start(flaky, { q: 'x' });
    await eventOf(rt, 'run:waiting', run.id);
    await rt.clock.advance(5_000);
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { answer: 'x' } });
    expect(seen).toEqual([{ q: 'x' }, { q: 'x' }]);
    expect((await eventTypes(run.id)).filter((t) => t === 'attempt:started')).toHaveLength(2);
  });
});
