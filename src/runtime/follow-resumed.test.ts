/**
 * Issue 12 items 1-2: following a run that was resumed after it ended follows it to its current
 * end, and a run a person's answer ended is not started over by a resume.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NonRetriableError } from '../core/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;

/** Resolves once the run has at least `n` events of `type`, counting those already committed. */
function seen(type: string, runId: string, n = 1): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const check = async () => {
      if (done) return;
      const count = (await rt.store.readEvents({ runId })).filter((e) => e.type === type).length;
      if (count >= n && !done) {
        done = true;
        off();
        resolve();
      }
    };
    const off = rt.store.onEvents(() => void check());
    void check();
  });
}

afterEach(async () => {
  await rt?.dispose();
});

describe('baton.events(id) after a resume', () => {
  it('follows the resumed run to its current end, not to the terminal event of its first life', async () => {
    rt = testRuntime();
    let attempts = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const t = defineTask({
      name: 'twice',
      retry: false,
      run: async () => {
        attempts += 1;
        if (attempts === 1) throw new NonRetriableError('the first life fails');
        await gate;
        return 'second life';
      },
    });
    const run = await rt.baton.start(t, {});
    expect((await run.result()).status).toBe('failed');
    await rt.baton.resume(run.id);
    const types: string[] = [];
    const followed = (async () => {
      for await (const e of rt.baton.events(run.id)) {
        types.push(e.type);
        if (e.type === 'attempt:started' && types.filter((x) => x === 'attempt:started').length === 2)
          release();
      }
    })();
    await followed;
    expect(types.filter((x) => x === 'run:failed')).toHaveLength(1);
    expect(types.slice(types.indexOf('run:failed') + 1)).toEqual([
      'run:resumed',
      'run:queued',
      'attempt:started',
      'attempt:succeeded',
      'run:succeeded',
    ]);
    expect((await run.result()).output).toBe('second life');
  });
});

describe('resume of a run an answer ended', () => {
  const stubborn = () =>
    defineTask({
      name: 'stubborn',
      timeout: '1s',
      retry: false,
      escalation: { ask: true },
      run: async (_: unknown, ctx) => {
        await ctx.partial({ claim: 'found early' });
        await ctx.delay(60_000);
        return 'never';
      },
    });

  for (const choice of ['abandon', 'continue_partial', 'skip'] as const)
    it(`leaves a run ended by a person's "${choice}" as it is, and runs it again only when asked to`, async () => {
      rt = testRuntime();
      const run = await rt.baton.start(stubborn(), {});
      await seen('attempt:started', run.id);
      await rt.clock.advance(2_000);
      await seen('decision:requested', run.id);
      const ended = await rt.baton.decide(run.id, choice, 'ada');
      expect(['failed', 'partial']).toContain(ended.status);
      const attemptsBefore = (await rt.store.readEvents({ runId: run.id })).filter(
        (e) => e.type === 'attempt:started',
      ).length;
      const resumed = await rt.baton.resume(run.id);
      expect(resumed.resumed).toMatchObject({
        action: 'ended_by_answer',
        endedBy: { choice, by: 'ada' },
        run: { status: ended.status },
      });
      const events = await rt.store.readEvents({ runId: run.id });
      expect(events.filter((e) => e.type === 'attempt:started')).toHaveLength(attemptsBefore);
      expect(events.at(-1)?.type).toBe(ended.status === 'failed' ? 'run:failed' : 'run:partial');

      const again = await rt.baton.resume(run.id, 'ada', { again: true });
      expect(again.resumed.action).toBe('requeued');
      await seen('attempt:started', run.id, attemptsBefore + 1);
      expect((await rt.baton.getRun(run.id))?.meta.endedBy).toBeNull();
    });

  it('resumes a run the unattended policy ended (nobody chose to stop it)', async () => {
    rt = testRuntime();
    const t = defineTask({
      name: 'unattended',
      timeout: '1s',
      retry: false,
      run: async (_: unknown, ctx) => {
        await ctx.delay(60_000);
        return 'never';
      },
    });
    const run = await rt.baton.start(t, {}, { escalation: 'policy' });
    await seen('attempt:started', run.id);
    await rt.clock.advance(2_000);
    expect((await run.result()).status).toBe('partial');
    expect((await rt.baton.resume(run.id)).resumed.action).toBe('requeued');
  });
});
