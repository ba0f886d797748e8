import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

describe('baton.start with a JSON plan object (issue 12 item 7)', () => {
  for (const plan of [
    { plan: { steps: [{ aiName: 'x', draftArgs: {} }] } },
    { steps: [{ task: 'x' }] },
    { task_chain: [{ task_id: 'a', agent: 'x' }] },
  ])
    it(`names loadPlan for ${Object.keys(plan)[0]}, and stores nothing`, async () => {
      rt = testRuntime();
      const err = await rt.baton.start(plan as never).catch((e: unknown) => e);
      expect(isBatonError(err, 'INVALID_INPUT')).toBe(true);
      expect((err as Error).message).toContain(
        'must be read with loadPlan first: baton.start(loadPlan(plan))',
      );
      expect(await rt.baton.listRuns()).toEqual([]);
    });

  it('says what it takes for anything else', async () => {
    rt = testRuntime();
    const err = await rt.baton.start(42 as never).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/start\(\) takes a task .* got number/);
  });
});
