/**
 * Protocol 001's six test scenarios, end to end through the engine on a real SQLite file, driven by
 * the manual clock: nothing here sleeps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask } from './define-task.ts';
import type { TaskContext } from './task-context.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

/** Finds one thing every 20 s until it has `total`, honouring its signal. */
async function research(ctx: TaskContext, total: number): Promise<{ findings: number }> {
  for (let i = 0; i < total; i++) {
    await ctx.delay(20_000);
    await ctx.partial({ finding: i + 1 });
  }
  return { findings: total };
}

const eventsOf = async (id: string) =>
  (await rt.store.readEvents({ runId: id })).map((e) => ({
    type: e.type,
    data: e.data as Record<string, unknown>,
  }));

describe('protocol 001 scenarios', () => {
  it('1. captures partial results correctly when an agent times out', async () => {
    rt = testRuntime();
    const slow = defineTask({
      name: 'slow',
      research: { mode: 'codebase' },
      retry: false,
      run: (_: unknown, ctx) => research(ctx, 10),
    });
    const run = await rt.baton.start(slow, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(61_000);
    const out = await run.result();
    expect(out.status).toBe('partial');
    expect(out.output).toEqual({
      status: 'timeout',
      partial: true,
      findings: [{ finding: 1 }, { finding: 2 }],
      search_exhausted: false,
      timed_out_at: '2026-11-22T12:01:00Z',
      timeout_duration_seconds: 60,
    });
    expect(out.run.meta).toMatchObject({ incomplete: true, researchComplete: false });
  });

  it('2. retries with an extended timeout (×2 after 5 s) and succeeds', async () => {
    rt = testRuntime();
    const task = defineTask({
      name: 'needs-100s',
      research: { mode: 'codebase' },
      run: (_: unknown, ctx) => research(ctx, 5),
    });
    const run = await rt.baton.start(task, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(60_000);
    await eventOf(rt, 'attempt:retrying', run.id);
    await rt.clock.advance(5_000);
    await eventOf(rt, 'attempt:started', run.id, 2);
    await rt.clock.advance(100_000);
    const out = await run.result();
    expect(out).toMatchObject({ status: 'succeeded', output: { findings: 5 } });
    const events = await eventsOf(run.id);
    expect(events.find((e) => e.type === 'attempt:timed_out')?.data).toMatchObject({
      timeoutMs: 60_000,
      findings: 2,
    });
    expect(events.find((e) => e.type === 'attempt:retrying')?.data).toMatchObject({
      waitMs: 5_000,
      nextTimeoutMs: 120_000,
    });
    expect(events.filter((e) => e.type === 'attempt:started').map((e) => e.data.timeoutMs)).toEqual([
      60_000, 120_000,
    ]);
  });

  it('3. shows the escalation message when all retries fail, and waits durably for the answer', async () => {
    rt = testRuntime();
    const task = defineTask({
      name: 'external-research',
      research: { mode: 'external' },
      escalation: { ask: true },
      run: async (_: unknown, ctx) => ctx.delay(3_600_000),
    });
    const run = await rt.baton.start(task, {});
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(120_000);
    await eventOf(rt, 'attempt:retrying', run.id);
    await rt.clock.advance(5_000);
    await eventOf(rt, 'attempt:started', run.id, 2);
    await rt.clock.advance(240_000);
    await eventOf(rt, 'attempt:retrying', run.id, 2);
    await rt.clock.advance(15_000);
    await eventOf(rt, 'attempt:started', run.id, 3);
    await rt.clock.advance(360_000);
    const asked = await eventOf(rt, 'decision:requested', run.id);
    const request = asked.data.request as { message: string; choices: Array<{ id: string }> };
    expect(request.message).toBe(
      'Research agent failed after 3 attempts.\nMode: External | Total time spent: 12 minutes\n\nOptions:\n[Continue without external research]\n[Manual research input]\n[Abandon planning session]',
    );
    expect(request.choices.map((c) => c.id)).toEqual(['skip', 'manual_input', 'abandon']);
    // The question survives a restart: a new runtime on the same file answers it.
    await rt.baton.close();
    const { createBaton } = await import('./baton.ts');
    const again = createBaton({ store: rt.store, clock: rt.clock, tasks: [task] });
    expect((await again.getRun(run.id))?.waitReason).toBe('decision');
    const bad = await again
      .decide(run.id, { choice: 'different_mode', mode: 'docs' })
      .catch((e: unknown) => e);
    expect(isBatonError(bad, 'DECISION_INVALID')).toBe(true);
    expect((bad as Error).message).toMatch(
      /^answer\.choice must be one of "skip", "manual_input", "abandon"/,
    );
    await again.decide(run.id, { choice: 'manual_input', input: { notes: 'read it myself' } }, 'cli');
    const out = await again.result(run.id);
    expect(out).toMatchObject({ status: 'succeeded', output: { notes: 'read it myself' } });
    await again.close();
  });

  it('4. halves the timeouts in fast mode, retries once after 2 s, and shows the warning', async () => {
    rt = testRuntime();
    const task = defineTask({
      name: 'docs-lookup',
      research: { mode: 'docs' },
      run: async (_: unknown, ctx) => ctx.delay(3_600_000),
    });
    const run = await rt.baton.start(task, {}, { fast: true });
    await eventOf(rt, 'attempt:started', run.id);
    await rt.clock.advance(45_000);
    await eventOf(rt, 'attempt:retrying', run.id);
    await rt.clock.advance(2_000);
    await eventOf(rt, 'attempt:started', run.id, 2);
    await rt.clock.advance(90_000);
    const out = await run.result();
    const events = await eventsOf(run.id);
    expect(events.filter((e) => e.type === 'attempt:started').map((e) => e.data.timeoutMs)).toEqual([
      45_000, 90_000,
    ]);
    expect(events.find((e) => e.type === 'attempt:retrying')?.data.waitMs).toBe(2_000);
    expect(events.find((e) => e.type === 'log:message')?.data.message).toBe(
      'Fast mode: Research timeouts reduced by 50%\nResearch quality may be lower. For thorough research, omit --fast-mode.',
    );
    // No findings at all: the unattended policy skips the research so the pipeline can go on.
    expect(out).toMatchObject({ status: 'partial', output: { skipped: true, research_complete: false } });
  });

  it('5 and 6. marks partial results in the tracked state and lets the flow continue with incomplete research', async () => {
    rt = testRuntime();
    const researcher = (name: string, mode: string, items: number) =>
      defineTask({
        name,
        research: { mode },
        escalation: { ask: true },
        run: (_: unknown, ctx) => research(ctx, items),
      });
    const codebase = researcher('codebase-agent', 'codebase', 2);
    const docs = researcher('docs-agent', 'docs', 3);
    const external = researcher('external-agent', 'external', 100);
    const seen: Record<string, boolean> = {};
    const plan = defineTask({
      name: 'approaches',
      run: async (_: unknown, ctx) => {
        for (const [k, d] of Object.entries(ctx.dependencies)) seen[k] = d.incomplete;
        return 'planned';
      },
    });
    const flow = defineFlow({
      name: 'planning',
      output: 'plan',
      steps: [
        { id: 'codebase', task: codebase },
        { id: 'docs', task: docs },
        { id: 'external', task: external },
        { id: 'plan', task: plan, dependsOn: ['codebase', 'docs', 'external'] },
      ],
    });
    const run = await rt.baton.start(flow, {});
    const ext = `${run.id}.external`;
    await eventOf(rt, 'attempt:started', ext);
    await rt.clock.advance(120_000);
    await eventOf(rt, 'attempt:retrying', ext);
    await rt.clock.advance(5_000);
    await eventOf(rt, 'attempt:started', ext, 2);
    await rt.clock.advance(240_000);
    await eventOf(rt, 'attempt:retrying', ext, 2);
    await rt.clock.advance(15_000);
    await eventOf(rt, 'attempt:started', ext, 3);
    await rt.clock.advance(360_000);
    const request = (await eventOf(rt, 'decision:requested', ext)).data.request as { message: string };
    expect(request.message).toMatch(/^Research agent failed after 3 attempts\.\nMode: External/);
    expect(request.message).toMatch(/\[Continue with partial results\]/);
    await rt.baton.decide(`${run.id}.external`, 'continue_partial');
    const out = await run.result();
    expect(out).toMatchObject({ status: 'partial', output: 'planned' });
    expect(seen).toEqual({ codebase: false, docs: false, external: true });
    // The three research agents count, as in the protocol's example; the planning step is no agent.
    expect(out.run.meta.timeout_state).toEqual({
      agents_spawned: 3,
      agents_completed: 2,
      agents_timed_out: 1,
      timeout_details: [{ mode: 'external', timeout_at: 120, retries: 2, final_status: 'partial' }],
      overall_status: 'partial',
    });
    const external_ = await rt.baton.getRun(`${run.id}.external`);
    expect(external_?.output).toMatchObject({
      status: 'timeout',
      partial: true,
      timeout_duration_seconds: 360,
    });
  });
});
