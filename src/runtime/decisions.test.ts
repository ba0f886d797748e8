/**
 * Escalation decisions through the real engine (protocol 001, "Process User Choice" and "Escalation
 * Path"): what each answer does to the run, who may answer and when, and the option checks that keep
 * a bad timeout, multiplier, mode or policy from ever reaching a run. Real SQLite file, manual clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BatonEventMap, type BatonEventType, isBatonError, NonRetriableError } from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask, type TaskOptions } from './define-task.ts';
import type { TaskContext } from './task-context.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DT = 'escalation.decisionTimeout';
const POLICY = 'escalation.policy';

let rt: TestRuntime;
beforeEach(() => {
  rt = testRuntime();
});
afterEach(async () => {
  await rt?.dispose();
});

async function dataOf<T extends BatonEventType>(runId: string, type: T): Promise<BatonEventMap[T][]> {
  const events = await rt.store.readEvents({ runId, limit: 10_000 });
  return events.filter((e) => e.type === type).map((e) => e.data as BatonEventMap[T]);
}

async function errorOf(p: unknown): Promise<unknown> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    return err;
  }
  throw new Error('expected an error, got none');
}

/** Records one finding, then works until its signal fires (a timeout). */
async function findOneThenStall(ctx: TaskContext): Promise<never> {
  await ctx.partial({ finding: ctx.attempt });
  await ctx.delay(10 * HOUR);
  throw new Error('unreachable');
}

/** A codebase-mode researcher (60 s) that asks a human; `acceptPartial` gives the timeout menu. */
function researcher(
  name: string,
  run: (ctx: TaskContext) => Promise<unknown>,
  extra: Partial<TaskOptions<unknown, unknown>> = {},
) {
  return defineTask({
    name,
    research: { mode: 'codebase' },
    retry: { acceptPartial: true },
    escalation: { ask: true },
    run: (_: unknown, ctx) => run(ctx),
    ...extra,
  });
}

/** Starts a task and waits until its question is stored (after the first 60 s timeout). */
async function startUntilAsked(task: ReturnType<typeof researcher>): Promise<string> {
  const run = await rt.baton.start(task, {});
  await eventOf(rt, 'attempt:started', run.id);
  await rt.clock.advance(60_000);
  await eventOf(rt, 'decision:requested', run.id);
  return run.id;
}

describe('answers', () => {
  it('retry_extended doubles the last timeout for the next attempt, each time', async () => {
    const task = researcher('extend-me', (ctx) =>
      ctx.attempt < 3 ? findOneThenStall(ctx) : Promise.resolve('found it'),
    );
    const id = await startUntilAsked(task);
    await rt.baton.decide(id, 'retry_extended');
    await eventOf(rt, 'attempt:started', id, 2);
    await rt.clock.advance(120_000);
    const second = await eventOf(rt, 'decision:requested', id, 2);
    expect(second.data.request).toMatchObject({ timeoutMs: 120_000 });
    expect((second.data.request as { message: string }).message).toMatch(
      /^Research agent timed out after 120 seconds\./,
    );
    await rt.baton.decide(id, { choice: 'retry_extended' });
    expect(await rt.baton.result(id)).toMatchObject({ status: 'succeeded', output: 'found it' });
    expect((await dataOf(id, 'attempt:started')).map((d) => d.timeoutMs)).toEqual([60_000, 120_000, 240_000]);
  });

  it("different_mode restarts with the new mode's timeouts and a fresh retry count", async () => {
    const modes: unknown[] = [];
    const task = researcher('switch-mode', async (ctx) => {
      modes.push(ctx.mode);
      if (ctx.attempt === 1) return findOneThenStall(ctx);
      if (ctx.attempt === 2) throw new Error('docs site returned 502');
      return `done in ${ctx.mode}`;
    });
    const id = await startUntilAsked(task);
    await rt.baton.decide(id, { choice: 'different_mode', mode: 'docs' });
    // A fresh count: the failure of the first docs attempt is retry 1 (5 s, ×2), not retry 2 (15 s, ×3).
    const retrying = await eventOf(rt, 'attempt:retrying', id);
    expect(retrying.data).toMatchObject({ waitMs: 5_000, nextTimeoutMs: 180_000 });
    await rt.clock.advance(5_000);
    expect(await rt.baton.result(id)).toMatchObject({ status: 'succeeded', output: 'done in docs' });
    expect(modes).toEqual(['codebase', 'docs', 'docs']);
    expect((await dataOf(id, 'attempt:started')).map((d) => d.timeoutMs)).toEqual([60_000, 90_000, 180_000]);
  });

  it('skip ends the run partial with { skipped: true, research_complete: false }', async () => {
    const task = researcher('skippable', async () => {
      throw new Error('search API down');
    });
    const run = await rt.baton.start(task, {});
    await eventOf(rt, 'attempt:retrying', run.id);
    await rt.clock.advance(5_000);
    await eventOf(rt, 'attempt:retrying', run.id, 2);
    await rt.clock.advance(15_000);
    await eventOf(rt, 'decision:requested', run.id);
    await rt.baton.decide(run.id, 'skip', 'cli');
    const out = await run.result();
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({ skipped: true, research_complete: false });
    expect(out.run.meta).toMatchObject({ skipped: true, researchComplete: false, incomplete: true });
    expect(await dataOf(run.id, 'decision:made')).toEqual([
      {
        answer: { choice: 'skip' },
        by: 'cli',
        answeredBy: { kind: 'person', name: 'cli' },
        action: 'finish',
      },
    ]);
  });

  it('abandon fails the step and its whole flow, cancelling the steps still open', async () => {
    const external = defineTask({
      name: 'external-research',
      retry: false,
      escalation: { ask: true },
      run: async () => {
        throw new Error('search API down');
      },
    });
    const codebase = defineTask({ name: 'codebase-scan', run: (_: unknown, ctx) => ctx.delay(10 * HOUR) });
    const plan = defineTask({ name: 'approaches', run: () => 'planned' });
    const flow = defineFlow({
      name: 'planning',
      steps: [
        { id: 'external', task: external },
        { id: 'codebase', task: codebase },
        { id: 'plan', task: plan, dependsOn: ['external', 'codebase'] },
      ],
    });
    const run = await rt.baton.start(flow, {});
    await eventOf(rt, 'attempt:started', `${run.id}.codebase`);
    await eventOf(rt, 'decision:requested', `${run.id}.external`);
    await rt.baton.decide(`${run.id}.external`, 'abandon');
    const out = await run.result();
    expect(out.status).toBe('failed');
    expect(out.error?.message).toMatch(/abandoned after 1 attempt\(s\), decided by api/);
    const status = async (step: string) => (await rt.baton.getRun(`${run.id}.${step}`))?.status;
    expect(await status('external')).toBe('failed');
    expect(await status('codebase')).toBe('cancelled');
    expect(await status('plan')).toBe('cancelled');
    await rt.baton.worker?.idle();
    expect(rt.baton.worker?.running).toBe(0);
  });
  it('never escalates a NonRetriableError: the run fails at once, without retrying', async () => {
    const task = defineTask({
      name: 'bad-credentials',
      escalation: { ask: true },
      run: async () => {
        throw new NonRetriableError('401 Unauthorized');
      },
    });
    const out = await (await rt.baton.start(task, {})).result();
    expect(out.status).toBe('failed');
    expect(isBatonError(out.error, 'NON_RETRIABLE')).toBe(true);
    const types = (await rt.store.readEvents({ runId: out.id })).map((e) => e.type);
    expect(types).toEqual(['run:created', 'run:queued', 'attempt:started', 'attempt:failed', 'run:failed']);
  });
});

describe('who answers, and when', () => {
  it('lets the policy answer when no one decides within escalation.decisionTimeout', async () => {
    const task = researcher('unattended', findOneThenStall, {
      retry: false,
      escalation: { ask: true, decisionTimeout: '10m' },
    });
    const id = await startUntilAsked(task);
    const asked = await eventOf(rt, 'decision:requested', id);
    expect(Date.parse(asked.data.timeoutAt ?? '')).toBe(rt.clock.now() + 10 * MIN);
    await rt.clock.advance(10 * MIN - 1);
    expect(await rt.baton.getRun(id)).toMatchObject({ status: 'waiting', waitReason: 'decision' });
    await rt.clock.advance(1);
    const made = await eventOf(rt, 'decision:made', id);
    expect(made.data).toEqual({
      answer: { choice: 'continue_partial' },
      by: 'policy (decision timeout)',
      answeredBy: { kind: 'policy', trigger: 'decision_timeout' },
      action: 'finish',
    });
    expect((await rt.baton.getRun(id))?.meta.decisions).toMatchObject([
      { by: 'policy (decision timeout)', answeredBy: { kind: 'policy', trigger: 'decision_timeout' } },
    ]);
    const out = await rt.baton.result(id);
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({ status: 'timeout', partial: true, findings: [{ finding: 1 }] });
  });

  it('keeps an answer given in time: the decision timeout does nothing afterwards', async () => {
    const task = researcher('attended', findOneThenStall, {
      retry: false,
      escalation: { ask: true, decisionTimeout: '10m' },
    });
    const id = await startUntilAsked(task);
    await rt.baton.decide(id, 'skip');
    await rt.clock.advance(11 * MIN);
    expect(await dataOf(id, 'decision:made')).toMatchObject([{ answer: { choice: 'skip' }, by: 'api' }]);
    expect((await rt.baton.result(id)).output).toMatchObject({ skipped: true });
  });

  it('answers a decision timeout as the unattended policy would: a failure with nothing found is abandoned', async () => {
    const broken = (name: string, ask: boolean) =>
      defineTask({
        name,
        retry: false,
        escalation: { ask, decisionTimeout: '1m' },
        run: async () => {
          throw new Error('search API down');
        },
      });
    const unattended = await rt.baton.start(broken('broken-unattended', false), {});
    const byPolicy = await unattended.result();
    const asked = await rt.baton.start(broken('broken-asked', true), {});
    await eventOf(rt, 'decision:requested', asked.id);
    await rt.clock.advance(MIN);
    const byTimeout = await asked.result();
    expect(byPolicy.status).toBe('failed');
    expect(byTimeout.status).toBe(byPolicy.status);
  });

  it('in a flow, a decision timeout abandons only the step, as the unattended policy does', async () => {
    // The policy's "abandon" fails the step (and cancels what depends on it); only a person's ends
    // the whole flow. A timed-out question is answered by the policy, so the flow's other branch runs on.
    const broken = (name: string, ask: boolean) =>
      defineTask({
        name,
        retry: false,
        escalation: { ask, decisionTimeout: '1m' },
        run: async () => {
          throw new Error('search API down');
        },
      });
    const slow = defineTask({
      name: 'codebase-scan',
      budget: '1h',
      run: (_: unknown, ctx) => ctx.delay(5 * MIN).then(() => 'scanned'),
    });
    const flowOf = (name: string, ask: boolean) =>
      defineFlow({
        name,
        steps: [
          { id: 'external', task: broken(`${name}-external`, ask) },
          { id: 'codebase', task: slow },
        ],
      });
    const outcomeOf = async (ask: boolean) => {
      const run = await rt.baton.start(flowOf(ask ? 'asked' : 'unattended', ask), {});
      if (ask) {
        await eventOf(rt, 'decision:requested', `${run.id}.external`);
        await rt.clock.advance(MIN);
        expect((await dataOf(`${run.id}.external`, 'decision:made'))[0]?.by).toBe(
          'policy (decision timeout)',
        );
      }
      await eventOf(rt, 'attempt:started', `${run.id}.codebase`);
      await rt.clock.advance(5 * MIN);
      const out = await run.result();
      return { status: out.status, codebase: (await rt.baton.getRun(`${run.id}.codebase`))?.status };
    };
    const unattended = await outcomeOf(false);
    expect(unattended.codebase).toBe('succeeded');
    expect(await outcomeOf(true)).toEqual(unattended);
  });

  it("in a flow, a person's abandon ends the whole flow, even a person who calls themself 'policy'", async () => {
    const broken = defineTask({
      name: 'broken-asked',
      retry: false,
      escalation: { ask: true },
      run: async () => {
        throw new Error('search API down');
      },
    });
    const slow = defineTask({ name: 'slow-scan', budget: '1h', run: (_: unknown, ctx) => ctx.delay(HOUR) });
    const flow = defineFlow({
      name: 'planning',
      steps: [
        { id: 'external', task: broken },
        { id: 'codebase', task: slow },
      ],
    });
    const run = await rt.baton.start(flow, {});
    await eventOf(rt, 'decision:requested', `${run.id}.external`);
    await rt.baton.decide(`${run.id}.external`, 'abandon', 'policy');
    expect((await dataOf(`${run.id}.external`, 'decision:made'))[0]).toMatchObject({
      by: 'policy',
      answeredBy: { kind: 'person', name: 'policy' },
    });
    expect((await run.result()).status).toBe('failed');
  });

  it('gives RUN_CONFLICT to the second of two concurrent answers, and applies only the first', async () => {
    const id = await startUntilAsked(researcher('contested', findOneThenStall));
    const answers = await Promise.allSettled([
      rt.baton.decide(id, 'continue_partial', 'alice'),
      rt.baton.decide(id, 'skip', 'bob'),
    ]);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected']);
    expect(isBatonError((answers[1] as PromiseRejectedResult).reason, 'RUN_CONFLICT')).toBe(true);
    expect(await dataOf(id, 'decision:made')).toMatchObject([
      { by: 'alice', answeredBy: { kind: 'person', name: 'alice' } },
    ]);
    expect((await rt.baton.result(id)).status).toBe('partial');
  });

  it('gives RUN_CONFLICT to an answer for a run that is not waiting for one', async () => {
    const done = await rt.baton.start(defineTask({ name: 'quick', run: () => 1 }), {});
    await done.result();
    const err = await errorOf(rt.baton.decide(done.id, 'skip'));
    expect(isBatonError(err, 'RUN_CONFLICT')).toBe(true);
    expect((err as Error).message).toMatch(/is not waiting for a decision \(it is succeeded\)/);

    const flaky = defineTask({
      name: 'flaky',
      run: async () => {
        throw new Error('503');
      },
    });
    const backingOff = await rt.baton.start(flaky, {});
    await eventOf(rt, 'run:waiting', backingOff.id);
    const early = await errorOf(rt.baton.decide(backingOff.id, 'skip'));
    expect(isBatonError(early, 'RUN_CONFLICT')).toBe(true);
    expect((early as Error).message).toMatch(/\(it is waiting: timer\)/);
    expect(await dataOf(backingOff.id, 'decision:made')).toEqual([]);
    expect(isBatonError(await errorOf(rt.baton.decide('run_nope', 'skip')), 'RUN_NOT_FOUND')).toBe(true);
  });

  it('refuses an invalid answer with DECISION_INVALID naming the field, and keeps waiting', async () => {
    const timeoutMenu = await startUntilAsked(researcher('timeout-menu', findOneThenStall));
    const exhaustedMenu = await startUntilAsked(
      researcher('exhausted-menu', findOneThenStall, { retry: false }),
    );
    const cases: Array<[string, unknown, string]> = [
      [timeoutMenu, 42, 'answer'],
      [timeoutMenu, null, 'answer'],
      [timeoutMenu, 'manual_input', 'answer.choice'],
      [timeoutMenu, { choice: 'psychic' }, 'answer.choice'],
      [timeoutMenu, { choice: 'different_mode' }, 'answer.mode'],
      [timeoutMenu, { choice: 'different_mode', mode: 'codebase' }, 'answer.mode'],
      [exhaustedMenu, 'retry_extended', 'answer.choice'],
      [exhaustedMenu, { choice: 'manual_input' }, 'answer.input'],
    ];
    for (const [id, answer, field] of cases) {
      const err = await errorOf(rt.baton.decide(id, answer));
      expect(isBatonError(err, 'DECISION_INVALID'), JSON.stringify(answer)).toBe(true);
      expect((err as { data: { field: string } }).data.field).toBe(field);
      expect((err as Error).message.startsWith(`${field} must be `)).toBe(true);
    }
    for (const id of [timeoutMenu, exhaustedMenu]) {
      expect(await rt.baton.getRun(id)).toMatchObject({ status: 'waiting', waitReason: 'decision' });
      expect(await dataOf(id, 'decision:made')).toEqual([]);
    }
  });

  it("lets the start option escalation: 'policy' override a task's ask: true, and 'ask' override the default", async () => {
    const asker = researcher('asker', findOneThenStall, { retry: false });
    const run = await rt.baton.start(asker, {}, { escalation: 'policy' });
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(60_000);
    expect((await run.result()).status).toBe('partial');
    expect(await dataOf(run.id, 'decision:made')).toMatchObject([
      { answer: { choice: 'continue_partial' }, by: 'policy' },
    ]);
    expect((await dataOf(run.id, 'run:waiting')).map((w) => w.reason)).not.toContain('decision');

    const quiet = researcher('quiet', findOneThenStall, { retry: false, escalation: {} });
    const asked = await rt.baton.start(quiet, {}, { escalation: 'ask' });
    await eventOf(rt, 'attempt:started', asked.id);
    await rt.clock.advance(60_000);
    await eventOf(rt, 'decision:requested', asked.id);
    expect(await rt.baton.getRun(asked.id)).toMatchObject({ status: 'waiting', waitReason: 'decision' });
    expect(await dataOf(asked.id, 'decision:made')).toEqual([]);
  });
});

describe('invalid options', () => {
  const run = () => 'ok';
  const refused = async (make: () => unknown) => {
    const err = await errorOf(make);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    return err as { data: { field?: string }; message: string };
  };

  it.each([
    ['a negative timeout', { timeout: -5 }, 'timeout', 'a whole number of milliseconds'],
    ['a negative timeout string', { timeout: '-5s' }, 'timeout', 'a whole number of milliseconds'],
    [
      'empty timeout multipliers',
      { retry: { timeoutMultipliers: [] } },
      'retry.timeoutMultipliers',
      'a non-empty',
    ],
    [
      'a multiplier below 1',
      { retry: { timeoutMultipliers: [2, 0.5] } },
      'retry.timeoutMultipliers[1]',
      '≥ 1',
    ],
    [
      'an unknown mode',
      { research: { mode: 'psychic' } },
      'research.mode',
      'one of "codebase", "docs", "external", "dual"',
    ],
    [
      'a decisionTimeout that is no duration',
      { escalation: { decisionTimeout: 'soon' } },
      DT,
      'a whole number of milliseconds',
    ],
    [
      'a negative decisionTimeout',
      { escalation: { decisionTimeout: '-10m' } },
      DT,
      'a whole number of milliseconds',
    ],
    ['a zero decisionTimeout', { escalation: { decisionTimeout: 0 } }, DT, 'greater than 0'],
    [
      'an unknown policy fallback',
      { escalation: { policy: { otherwise: ['pray'] } } },
      `${POLICY}.otherwise[0]`,
      'one of',
    ],
    [
      'a negative policy minFindings',
      { escalation: { policy: { minFindings: -1 } } },
      `${POLICY}.minFindings`,
      'an integer',
    ],
  ])('refuses %s on defineTask, naming the field', async (_, options, field, expected) => {
    const err = await refused(() => defineTask({ name: 't', run, ...(options as object) }));
    expect(err.data.field).toBe(`task "t".${field}`);
    expect(err.message).toContain(`task "t".${field} must be ${expected}`);
  });

  it('refuses an unknown mode as a start option and stores nothing', async () => {
    const err = await refused(() =>
      rt.baton.start(defineTask({ name: 'oracle', run }), {}, { mode: 'psychic' }),
    );
    expect(err.message).toMatch(/mode must be one of .*got "psychic"/);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('refuses an unknown mode as a start option of a flow and stores nothing', async () => {
    const flow = defineFlow({ name: 'f', steps: [{ id: 'a', task: defineTask({ name: 'oracle', run }) }] });
    await refused(() => rt.baton.start(flow, {}, { mode: 'psychic' }));
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('refuses an unknown escalation start option and stores nothing', async () => {
    const err = await refused(() =>
      rt.baton.start(defineTask({ name: 'p', run }), {}, { escalation: 'maybe' as 'ask' }),
    );
    expect(err.message).toMatch(/^escalation must be "ask" or "policy", got "maybe"/);
    expect(await rt.baton.listRuns()).toEqual([]);
  });
});
