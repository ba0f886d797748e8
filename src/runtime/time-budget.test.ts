/**
 * Time budgets through the real engine (protocol 000, and the retry rules of protocol 001): the
 * assessment a task sees, the checkpoint record it writes, NORMAL → ACCELERATE, the budget across a
 * restart, degradation through ctx.tool, checkpoint moments, onRetry, RetryAfterError and durable backoff. Real SQLite file, manual
 * clock: every test waits for a stored event before it moves the clock, and nothing sleeps.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type BatonEventMap,
  type BatonEventType,
  checkpointRecordSchema,
  type DegradationTableOptions,
  RetryAfterError,
  type TimeAssessment,
} from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import type { Duration } from '../time/index.ts';
import { type Baton, createBaton } from './baton.ts';
import { defineTask, type TaskDefinition } from './define-task.ts';
import type { ResearchOptions } from './research-options.ts';
import type { StartOptions } from './start-run.ts';

const MIN = 60_000;
const T0 = '2026-11-22T12:00:00Z';

let rt: TestRuntime;
const others: Baton[] = [];
// These tests move the manual clock by hours. Polling for other processes' changes every 250 ms and
// heartbeating a 5 s lease would fire (and write to the store) thousands of times on the way; nothing
// here is about either.
const QUIET = { pollMs: 60_000, worker: { leaseMs: 60_000 } };
beforeEach(() => {
  rt = testRuntime(QUIET);
});
afterEach(async () => {
  for (const b of others.splice(0)) await b.close();
  await rt?.dispose();
});

/** A second runtime on the same file and clock: the process that comes back after a restart. */
function reopen(...tasks: TaskDefinition[]): Baton {
  const baton = createBaton({ ...QUIET, store: rt.store, clock: rt.clock, tasks });
  others.push(baton);
  return baton;
}

async function dataOf<T extends BatonEventType>(runId: string, type: T): Promise<BatonEventMap[T][]> {
  const events = await rt.store.readEvents({ runId, limit: 10_000 });
  return events.filter((e) => e.type === type).map((e) => e.data as BatonEventMap[T]);
}

/** Starts a task, lets `ms` of manual time pass once its attempt has started, and returns how it ended. */
async function runFor(task: TaskDefinition, ms: number, options?: StartOptions) {
  const run = await rt.baton.start(task, {}, options);
  await eventOf(rt, 'attempt:started', run.id);
  await rt.clock.advance(ms);
  return run.result();
}

/** A task that throws `error` on its first attempt and succeeds on the next. */
const failsOnce = (name: string, error: Error) =>
  defineTask({
    name,
    run: async (_: unknown, ctx) => {
      if (ctx.attempt === 1) throw error;
      return `ok on attempt ${ctx.attempt}`;
    },
  });

describe('the time assessment a task sees', () => {
  it("gives every field of the protocol's assessment for the task's 75-minute budget, with items per minute from ctx.progress", async () => {
    let seen: TimeAssessment | undefined;
    const agent = defineTask({
      name: 'agent',
      budget: '75m',
      run: async (_: unknown, ctx) => {
        await ctx.delay(30 * MIN);
        ctx.progress(3, 15);
        seen = ctx.time.assess();
        await ctx.checkpoint({ papers: ['a', 'b', 'c'] }, { itemsAnalyzed: 3, itemsTotal: 15 });
        return 'done';
      },
    });
    const { run } = await runFor(agent, 30 * MIN);
    expect(run.status).toBe('succeeded');
    const assessment = {
      start_time: T0,
      current_time: '2026-11-22T12:30:00Z',
      elapsed_seconds: 1800,
      elapsed_formatted: '30 minutes',
      remaining_seconds: 2700,
      remaining_formatted: '45 minutes',
      budget_seconds: 4500,
      budget_formatted: '75 minutes',
      progress_percentage: 40,
      time_status: 'on_track',
      items_per_minute: 0.1,
    };
    // toEqual: exactly these 11 fields, no more (an extra or a missing field fails).
    expect(seen).toEqual(assessment);
    // The stored record is the protocol's "Checkpoint Format", field for field.
    const record = (await rt.store.getLastCheckpoint(run.id))?.record;
    expect(checkpointRecordSchema.safeParse(record).success).toBe(true);
    expect(record).toEqual({
      checkpoint_id: 'agent_001',
      timestamp: '2026-11-22T12:30:00Z',
      items_analyzed: 3,
      progress_percentage: 20,
      time_assessment: assessment,
      status: 'in_progress',
    });
  });

  it("uses the start option's budget over the task's, with items per minute from checkpoint items", async () => {
    let seen: TimeAssessment | undefined;
    const agent = defineTask({
      name: 'agent',
      budget: '2h',
      run: async (_: unknown, ctx) => {
        await ctx.delay(30 * MIN);
        await ctx.checkpoint({ at: 6 }, { itemsAnalyzed: 6 });
        seen = ctx.time.assess();
        return ctx.time.budgetMs;
      },
    });
    const out = await runFor(agent, 30 * MIN, { budget: '75m' });
    expect(out.output).toBe(4_500_000);
    expect(out.run).toMatchObject({ budgetMs: 4_500_000, deadlineAt: Date.parse(T0) + 4_500_000 });
    expect(seen).toMatchObject({ budget_seconds: 4500, remaining_seconds: 2700, items_per_minute: 0.2 });
    const record = (await rt.store.getLastCheckpoint(out.id))?.record;
    expect(checkpointRecordSchema.safeParse(record).success).toBe(true);
    expect(record).toMatchObject({ items_analyzed: 6, progress_percentage: null });
  });

  it('switches NORMAL → ACCELERATE once fewer than 300 s remain, with one time:mode_changed event', async () => {
    const modes: string[] = [];
    const task = defineTask({
      name: 'racer',
      budget: '10m',
      run: async (_: unknown, ctx) => {
        for (let minute = 1; minute <= 8; minute++) {
          await ctx.delay(MIN);
          modes.push(ctx.time.mode);
          ctx.time.assess();
        }
        return modes.length;
      },
    });
    const { run, output } = await runFor(task, 8 * MIN);
    expect(output).toBe(8);
    // Exactly 300 s left (minute 5) is not yet critical: the protocol's test is `remaining < 300`.
    expect(modes).toEqual([...Array(5).fill('NORMAL'), ...Array(3).fill('ACCELERATE')]);
    expect(await dataOf(run.id, 'time:mode_changed')).toEqual([
      { from: 'NORMAL', to: 'ACCELERATE', timeStatus: 'time_critical', remainingSeconds: 240 },
    ]);
  });

  it("computes the remaining budget after a restart from the run's stored start and caps the new attempt's timeout by it", async () => {
    const seen: unknown[] = [];
    const task = defineTask({
      name: 'long-haul',
      budget: '75m',
      run: async (_: unknown, ctx) => {
        const t = ctx.time;
        seen.push({ attempt: ctx.attempt, startMs: t.startMs, remainingMs: t.remainingMs(), ...t.assess() });
        await ctx.delay(4 * 60 * MIN);
      },
    });
    const run = await rt.baton.start(task, {});
    const t0 = rt.clock.now();
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(30 * MIN);
    // The process goes away mid-attempt, and stays away for 10 minutes.
    await rt.baton.close();
    expect((await rt.store.getRun(run.id))?.status).toBe('queued');
    await rt.clock.advance(10 * MIN);

    const again = reopen(task);
    await again.ready();
    await eventOf(rt, 'attempt:started', run.id, 2);
    await rt.clock.advance(35 * MIN);
    const out = await again.result(run.id);
    expect(seen[1]).toMatchObject({
      attempt: 2,
      startMs: t0,
      remainingMs: 35 * MIN,
      start_time: T0,
      current_time: '2026-11-22T12:40:00Z',
      elapsed_seconds: 2400,
      remaining_seconds: 2100,
      budget_seconds: 4500,
    });
    // Attempt 1 ran under the per-agent cap (48 min); attempt 2 only under what is left (35 min).
    expect((await dataOf(run.id, 'attempt:started')).map((d) => d.timeoutMs)).toEqual([2_880_000, 35 * MIN]);
    expect(await dataOf(run.id, 'attempt:timed_out')).toMatchObject([{ timeoutMs: 35 * MIN }]);
    expect(out.run.finishedAt).toBe(t0 + 75 * MIN);
  });
});

describe('a run with no time left', () => {
  it('ends at once when its budget is 0: escalated by the unattended policy, no attempt body runs', async () => {
    let ran = 0;
    const task = defineTask({
      name: 'no-time',
      run: async () => {
        ran++;
        return 'never';
      },
    });
    const run = await rt.baton.start(task, {}, { budget: 0 });
    const out = await run.result();
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({ skipped: true });
    expect(ran).toBe(0);
    expect(await dataOf(run.id, 'attempt:timed_out')).toMatchObject([{ timeoutMs: 0 }]);
    expect(await dataOf(run.id, 'lease:recovered')).toEqual([]);
  });

  it('ends at once when resumed after its budget elapsed, with the findings of its last checkpoint', async () => {
    const task = defineTask({
      name: 'outlived',
      budget: '3s',
      run: async (_: unknown, ctx) => {
        await ctx.checkpoint({ findings: [{ claim: 'saved' }] });
        await ctx.delay(60 * MIN);
      },
    });
    const run = await rt.baton.start(task, {});
    await eventOf(rt, 'checkpoint:saved', run.id);
    // The process goes away mid-attempt and comes back after the whole budget has passed.
    await rt.baton.close();
    await rt.clock.advance(10_000);
    const again = reopen(task);
    await again.ready();
    const out = await again.result(run.id);
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({ partial: true, findings: [{ claim: 'saved' }] });
    expect((await dataOf(run.id, 'attempt:timed_out')).at(-1)).toMatchObject({ timeoutMs: 0 });
  });

  it('waits for a person when its policy asks, instead of looping', async () => {
    const task = defineTask({ name: 'asks', escalation: { ask: true }, run: async () => 'never' });
    const run = await rt.baton.start(task, {}, { budget: '0s' });
    await eventOf(rt, 'decision:requested', run.id);
    expect(await rt.store.getRun(run.id)).toMatchObject({ status: 'waiting', waitReason: 'decision' });
  });
});

/** A task that calls the three tool kinds of the degradation table, each with a cheap path. */
async function toolRun(budget: Duration, elapsedMs: number, degradation?: DegradationTableOptions) {
  const calls: string[] = [];
  const call = (what: string) => () => {
    calls.push(what);
    return what;
  };
  const task = defineTask({
    name: 'reader',
    budget,
    ...(degradation ? { research: { degradation } } : {}),
    run: async (_: unknown, ctx) => {
      if (elapsedMs > 0) await ctx.delay(elapsedMs);
      const out: Record<string, unknown> = {};
      for (const kind of ['download_full', 'deep_analysis', 'search'])
        out[kind] = (await ctx.tool(kind, call(kind), { cheap: call(`${kind}:cheap`) })) ?? null;
      return out;
    },
  });
  const out = await runFor(task, elapsedMs);
  const { run } = out;
  expect(out.status).toBe('succeeded');
  const fields = (d: BatonEventMap['tool:skipped']) => [d.kind, d.reason, d.alternative, d.level];
  return {
    calls,
    output: out.output,
    skipped: (await dataOf(run.id, 'tool:skipped')).map(fields),
    degraded: (await dataOf(run.id, 'tool:degraded')).map(fields),
  };
}

describe('degradation through ctx.tool', () => {
  it('skips download_full, runs the quick summary for deep_analysis and searches normally when fewer than 300 s remain', async () => {
    const r = await toolRun('10m', 6 * MIN);
    expect(r.calls).toEqual(['deep_analysis:cheap', 'search']);
    expect(r.output).toEqual({ download_full: null, deep_analysis: 'deep_analysis:cheap', search: 'search' });
    expect(r.skipped).toEqual([
      ['download_full', 'TIME_CRITICAL: Skip full-text download', 'Use abstract only', 'critical'],
    ]);
    expect(r.degraded).toEqual([
      ['deep_analysis', 'TIME_CRITICAL: Skip deep analysis', 'Quick summary only', 'critical'],
    ]);
  });

  it("runs download_full's cheap alternative between 300 and 600 s left", async () => {
    const r = await toolRun('10m', 2 * MIN);
    expect(r.calls).toEqual(['download_full:cheap', 'deep_analysis:cheap', 'search']);
    expect(r.skipped).toEqual([]);
    expect(r.degraded).toEqual([
      ['download_full', 'ACCELERATE: Use abstract only', 'Prioritize key items only', 'warning'],
      ['deep_analysis', 'ACCELERATE: Medium-depth analysis', 'Medium-depth analysis only', 'warning'],
    ]);
  });

  it('runs every tool normally with plenty of time left', async () => {
    const r = await toolRun('75m', 30 * MIN);
    expect(r.calls).toEqual(['download_full', 'deep_analysis', 'search']);
    expect([...r.skipped, ...r.degraded]).toEqual([]);
  });

  it("follows a task's own degradation table", async () => {
    const r = await toolRun('10m', 6 * MIN, {
      rules: {
        download_full: {
          critical: { action: 'cheap', reason: 'TIME_CRITICAL: First page only', alternative: 'Read page 1' },
        },
        search: {
          critical: { action: 'skip', reason: 'TIME_CRITICAL: No new search', alternative: 'Use hits' },
        },
      },
    });
    expect(r.calls).toEqual(['download_full:cheap', 'deep_analysis:cheap']);
    expect(r.skipped).toEqual([['search', 'TIME_CRITICAL: No new search', 'Use hits', 'critical']]);
    expect(r.degraded.map((d) => d.slice(0, 2))).toEqual([
      ['download_full', 'TIME_CRITICAL: First page only'],
      ['deep_analysis', 'TIME_CRITICAL: Skip deep analysis'],
    ]);
  });
});

describe('checkpoint moments', () => {
  async function checkpointsAt(
    task: { name: string; research?: ResearchOptions; checkpointEvery?: number },
    items: number,
  ): Promise<number[]> {
    const taken: number[] = [];
    const def = defineTask({
      ...task,
      run: async (_: unknown, ctx) => {
        for (let i = 1; i <= items; i++) {
          if (ctx.shouldCheckpoint(i)) {
            await ctx.checkpoint({ i }, { itemsAnalyzed: i });
            taken.push(i);
          }
        }
        return taken.length;
      },
    });
    const run = await rt.baton.start(def, {});
    expect((await run.result()).status).toBe('succeeded');
    const stored = await rt.store.listCheckpoints(run.id);
    expect(stored.map((c) => c.record.items_analyzed)).toEqual(taken);
    return taken;
  }

  it("checkpoints at each research agent's interval from the protocol's table, unless checkpointEvery overrides it", async () => {
    expect(await checkpointsAt({ name: 'academic-researcher', research: {} }, 10)).toEqual([3, 6, 9]);
    expect(await checkpointsAt({ name: 'github-watcher', research: {} }, 10)).toEqual([2, 4, 6, 8, 10]);
    expect(await checkpointsAt({ name: 'community-listener', research: {} }, 10)).toEqual([5, 10]);
    expect(
      await checkpointsAt({ name: 'paper-reader', research: { agent: 'academic-researcher' } }, 7),
    ).toEqual([3, 6]);
    expect(
      await checkpointsAt(
        { name: 'fast-reader', research: { agent: 'academic-researcher' }, checkpointEvery: 4 },
        10,
      ),
    ).toEqual([4, 8]);
  });

  it('gives a task named like a protocol agent, without the research preset, the general defaults', async () => {
    expect(await checkpointsAt({ name: 'github-watcher' }, 4)).toEqual([1, 2, 3, 4]);
    expect(await checkpointsAt({ name: 'academic-researcher' }, 3)).toEqual([1, 2, 3]);
    expect(defineTask({ name: 'github-watcher', run: () => 1 }).agent).toBeUndefined();
    expect(defineTask({ name: 'github-watcher', research: {}, run: () => 1 }).agent).toBe('github-watcher');
  });

  it('refuses a research agent the protocols do not have, naming the field and the agents', () => {
    expect(() => defineTask({ name: 'x', research: { agent: 'gitub-watcher' }, run: () => 1 })).toThrow(
      /task "x"\.research\.agent must be one of "academic-researcher", "github-watcher", "community-listener", got "gitub-watcher"/,
    );
    expect(() => defineTask({ name: 'x', research: { mood: 'docs' } as never, run: () => 1 })).toThrow(
      /task "x"\.research\.mood is not an option \(did you mean "mode"\?\)/,
    );
  });

  /** Moments of a quick call, a deep analysis, a call of `longMs` and one of `shortMs`. */
  async function momentsOf(budget: Duration, longMs: number, shortMs: number) {
    const task = defineTask({
      name: `tools-${budget}`,
      budget,
      run: async (_: unknown, ctx) => {
        await ctx.tool('search', () => 'hits');
        await ctx.tool('deep_analysis', () => 'insight', { cheap: () => 'summary' });
        await ctx.tool('search', () => ctx.delay(longMs));
        await ctx.tool('search', () => ctx.delay(shortMs));
      },
    });
    const run = await rt.baton.start(task, {});
    await eventOf(rt, 'checkpoint:saved', run.id, 3);
    await rt.clock.advance(longMs);
    await eventOf(rt, 'checkpoint:saved', run.id, 5);
    await rt.clock.advance(shortMs);
    expect((await run.result()).status).toBe('succeeded');
    for (const cp of await rt.store.listCheckpoints(run.id))
      expect(checkpointRecordSchema.safeParse(cp.record).success).toBe(true);
    return (await dataOf(run.id, 'checkpoint:saved')).map((d) => d.moment);
  }

  it('checkpoints before a tool call, before a deep analysis, and after a call of min(60 s, 10 % of the budget)', async () => {
    const moments = ['before_tool', 'before_deep_analysis', 'before_tool', 'after_long_tool', 'before_tool'];
    expect(await momentsOf('75m', 60_000, 59_999)).toEqual(moments);
    // A 6-minute budget: 36 s is already long.
    expect(await momentsOf('6m', 36_000, 35_999)).toEqual(moments);
  });
});

describe('retries', () => {
  it('runs the next attempt with the input onRetry returns (a narrower scope)', async () => {
    const [wide, narrow] = [{ scope: 'the whole repository' }, { scope: 'src/runtime only' }];
    const inputs: unknown[] = [];
    const retries: unknown[] = [];
    const task = defineTask({
      name: 'scoped-search',
      run: async (input: { scope: string }, ctx) => {
        inputs.push(input);
        if (ctx.attempt > 1) return `searched ${input.scope}`;
        await ctx.partial({ hit: 1 });
        throw new Error('too many results');
      },
      onRetry: (info) => {
        retries.push({ ...info, error: info.error.message });
        return narrow;
      },
    });
    const run = await rt.baton.start(task, wide);
    await eventOf(rt, 'attempt:retrying', run.id);
    await rt.clock.advance(5_000);
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'searched src/runtime only' });
    expect(inputs).toEqual([wide, narrow]);
    const info = { input: wide, attempt: 1, error: 'too many results', findings: [{ hit: 1 }] };
    expect(retries).toEqual([{ ...info, mode: undefined }]);
  });

  it("waits a RetryAfterError's retryAfterMs when it is longer than the backoff", async () => {
    const run = await rt.baton.start(failsOnce('rate-limited', new RetryAfterError('429', 30_000)), {});
    const t0 = rt.clock.now();
    expect((await eventOf(rt, 'attempt:retrying', run.id)).data.waitMs).toBe(30_000);
    expect(await rt.store.getRun(run.id)).toMatchObject({ status: 'waiting', wakeAt: t0 + 30_000 });
    await rt.clock.advance(29_999);
    expect((await rt.store.getRun(run.id))?.status).toBe('waiting');
    await rt.clock.advance(1);
    await eventOf(rt, 'attempt:started', run.id, 2);
    expect((await run.result()).status).toBe('succeeded');
  });

  it("keeps a retry's wait as a durable timer: a run waiting across a restart runs once its wake time passes", async () => {
    const task = failsOnce('flaky', new Error('503 from upstream'));
    const run = await rt.baton.start(task, {});
    const t0 = rt.clock.now();
    await eventOf(rt, 'run:waiting', run.id);
    await rt.baton.close();
    expect(await rt.store.getRun(run.id)).toMatchObject({
      status: 'waiting',
      waitReason: 'timer',
      wakeAt: t0 + 5_000,
    });
    const again = reopen(task);
    await again.ready();
    await rt.clock.advance(4_999);
    expect((await rt.store.getRun(run.id))?.status).toBe('waiting');
    await rt.clock.advance(1);
    expect(await again.result(run.id)).toMatchObject({ status: 'succeeded', output: 'ok on attempt 2' });
  });
});
