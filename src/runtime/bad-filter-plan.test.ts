/** Issue 12 item 7: a bad filter in a step's input is ignored when it resolves (002 §3.2), not a plan error. */
import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { loadPlan } from './define-flow.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

describe('a plan whose reference has a bad filter', () => {
  it('runs, and the step gets the unfiltered selection with the failure recorded as ignore_filter', async () => {
    rt = testRuntime();
    let received: unknown;
    rt.baton.register(
      defineTask({ name: 'atoms', run: async () => ({ atoms: [{ t: 'claim' }, { t: 'method' }] }) }),
      defineTask({
        name: 'read',
        context: { plan: false },
        run: async (input: unknown) => {
          received = input;
          return 'ok';
        },
      }),
    );
    const plan = loadPlan({
      plan: {
        steps: [
          { id: 'scholar', aiName: 'atoms' },
          {
            aiName: 'read',
            draftArgs: {
              atoms: {
                data_reference: {
                  ref_type: 'task_output',
                  task_id: 'scholar',
                  path: '$.atoms',
                  filter: { field: 't', operator: 'like', value: 'claim' },
                },
              },
            },
          },
        ],
      },
    });
    const run = await rt.baton.start(plan);
    expect((await run.result()).status).toBe('succeeded');
    expect(received).toEqual({ atoms: [{ t: 'claim' }, { t: 'method' }] });
    const events = await rt.store.readEvents({ rootId: run.id });
    const resolved = events.find((e) => e.type === 'refs:resolved');
    expect(JSON.stringify(resolved?.data)).toContain('"fallback_strategy":"ignore_filter"');
    // The dependency edge still came from the reference: the reader ran after the scholar.
    const order = events.filter((e) => e.type === 'attempt:started').map((e) => e.runId);
    expect(order).toEqual([`${run.id}.scholar`, `${run.id}.1`]);
  });
});
