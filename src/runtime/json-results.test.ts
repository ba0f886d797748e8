/**
 * Issue 11 (noticed in review): what a task hands Baton to store — a step's result, partial findings —
 * is refused at the call with a typed error naming it when it is not JSON (a BigInt, a cycle, NaN),
 * instead of a raw TypeError from deep inside the store or a value that silently changes on replay.
 * Nothing is stored for a refused call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

function cycle(): unknown {
  const c: Record<string, unknown> = { a: 1 };
  c.self = c;
  return c;
}

const bad: Array<[string, () => unknown, string]> = [
  ['a BigInt', () => ({ n: 10n }), 'a BigInt at key "n"'],
  ['a cycle', cycle, 'without cycles'],
  ['NaN', () => [1, Number.NaN], 'NaN'],
];

describe('values a task stores must be JSON', () => {
  it.each(bad)(
    'ctx.step refuses a result holding %s, naming the step, and stores nothing',
    async (_, make, says) => {
      rt = testRuntime();
      let caught: unknown;
      const task = defineTask({
        name: 'stepper',
        timeout: '1m',
        retry: { maxRetries: 0 },
        run: async (_input: unknown, ctx) => {
          try {
            await ctx.step('compute', async () => make());
          } catch (err) {
            caught = err;
          }
          return await ctx.step('fine', async () => ({ ok: true }));
        },
      });
      const run = await rt.baton.start(task, {});
      const outcome = await run.result();
      expect(outcome.status).toBe('succeeded');
      expect(isBatonError(caught, 'NON_RETRIABLE')).toBe(true);
      expect((caught as Error).message).toContain('ctx.step("compute") result');
      expect((caught as Error).message).toContain(says);
      const steps = await rt.store.getSteps(run.id);
      expect(steps.map((s) => s.key)).toEqual(['fine']);
    },
  );

  it.each(bad)(
    'ctx.partial refuses a finding holding %s, naming which, and stores none of the call',
    async (_, make, says) => {
      rt = testRuntime();
      let caught: unknown;
      const task = defineTask({
        name: 'finder',
        timeout: '1m',
        retry: { maxRetries: 0 },
        run: async (_input: unknown, ctx) => {
          await ctx.partial({ first: true });
          try {
            await ctx.partial({ second: true }, make());
          } catch (err) {
            caught = err;
          }
          return 'done';
        },
      });
      const run = await rt.baton.start(task, {});
      expect((await run.result()).status).toBe('succeeded');
      expect(isBatonError(caught, 'NON_RETRIABLE')).toBe(true);
      expect((caught as Error).message).toContain('ctx.partial finding 2');
      expect((caught as Error).message).toContain(says);
      const partials = await rt.store.listPartials(run.id);
      expect(partials.flatMap((p) => p.findings)).toEqual([{ first: true }]);
    },
  );

  it.each(bad)('a task output holding %s fails the run for good, naming the task', async (_, make, says) => {
    rt = testRuntime();
    const task = defineTask({ name: 'returner', timeout: '1m', run: async () => make() });
    const run = await rt.baton.start(task, {});
    const outcome = await run.result();
    expect(outcome.status).toBe('failed');
    const stored = await rt.store.getRun(run.id);
    expect(stored?.attempt).toBe(1);
    expect(JSON.stringify(outcome)).toContain('the output of task \\"returner\\"');
    expect(JSON.stringify(outcome)).toContain(says.replaceAll('"', '\\"'));
  });
});
