/**
 * Property (issue 11, "keep it found"): whatever value a task checkpoints, it is either stored and
 * read back equal to what the task's next attempt will see, or refused at the call with a typed
 * error — and then nothing is stored. The checkpoints are read from the real SQLite store.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

/** Values a task might hold, hostile ones included: NaN, BigInt, -0, dates, holes, cycles, depth. */
const state = fc.oneof(
  fc.anything({ withBigInt: true, withDate: true, withNullPrototype: true, withSparseArray: true }),
  fc.jsonValue(),
  fc.constantFrom<unknown>(Number.NaN, Number.POSITIVE_INFINITY, () => 1, Symbol('s'), [undefined]),
  fc.integer({ min: 500, max: 600 }).map((depth) => {
    let v: unknown = 'leaf';
    for (let i = 0; i < depth; i++) v = { v };
    return v;
  }),
  fc.constant(null).map(() => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    return cycle;
  }),
);

describe('property: a checkpoint is stored and read back equal, or refused and not stored', () => {
  it('holds for any value', async () => {
    rt = testRuntime();
    const store = rt.store;
    let runId = '';
    const outcomes = { stored: 0, refused: 0 };
    const task = defineTask({
      name: 'checkpointer',
      timeout: '1h',
      retry: { maxRetries: 0 },
      run: async (_input: unknown, ctx) => {
        runId = ctx.runId;
        await fc.assert(
          fc.asyncProperty(state, async (value) => {
            const before = (await store.listCheckpoints(runId)).length;
            let refused: unknown;
            try {
              await ctx.checkpoint(value as never);
            } catch (err) {
              refused = err;
            }
            const after = await store.listCheckpoints(runId);
            if (refused !== undefined) {
              expect(
                isBatonError(refused, 'CHECKPOINT_INVALID') || isBatonError(refused, 'INVALID_INPUT'),
              ).toBe(true);
              expect((refused as Error).message).toMatch(/^checkpoint state /);
              expect(after.length).toBe(before);
              outcomes.refused++;
              return;
            }
            expect(after.length).toBe(before + 1);
            const expected = value === undefined ? null : JSON.parse(JSON.stringify(value));
            expect(after.at(-1)?.state).toStrictEqual(expected);
            outcomes.stored++;
          }),
          { numRuns: 200 },
        );
        return 'done';
      },
    });
    const run = await rt.baton.start(task, {});
    const out = await run.result();
    if (out.status !== 'succeeded') throw out.error ?? new Error(`run ${out.status}`);
    // Both branches were exercised. Not more than that: how many of the 200 values are storable is
    // up to the seed (49 stored was seen in CI), and the property above is what is asserted.
    expect(outcomes.stored).toBeGreaterThan(20);
    expect(outcomes.refused).toBeGreaterThan(5);
  });
});
