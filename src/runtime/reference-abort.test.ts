/** Issue 12 item 7: `fallback_config.strategy: "abort"` ends the step at once (002 §3.2), no task retries. */
import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const missing = (fallback: Record<string, unknown>) => ({
  notes: {
    data_reference: { ref_type: 'task_output', task_id: 'no_such_run', path: '$.atoms' },
    fallback_config: fallback,
  },
});

describe('a reference whose fallback strategy is abort', () => {
  it('fails the run on its first attempt with the reference error, never retried', async () => {
    rt = testRuntime();
    let bodies = 0;
    const task = defineTask({
      name: 'reader',
      run: async () => {
        bodies++;
        return 'read';
      },
    });
    const run = await rt.baton.start(task, missing({ strategy: 'abort' }));
    const out = await run.result();
    expect(out.status).toBe('failed');
    expect(out.error).toMatchObject({ code: 'REF_NOT_FOUND' });
    expect(bodies).toBe(0);
    const types = (await rt.store.readEvents({ runId: run.id })).map((e) => e.type);
    expect(types.filter((t) => t === 'attempt:started')).toHaveLength(1);
    expect(types).not.toContain('attempt:retrying');
    expect(types).not.toContain('decision:requested');
  });

  it('after its own retries, on_final_failure "abort" fails at once too', async () => {
    rt = testRuntime();
    const task = defineTask({ name: 'reader', run: async () => 'read' });
    const run = await rt.baton.start(
      task,
      missing({ strategy: 'retry', retry_count: 2, retry_delay_ms: 10, on_final_failure: 'abort' }),
    );
    for (let i = 0; i < 10; i++) await rt.clock.advance(10);
    const out = await run.result();
    expect(out.status).toBe('failed');
    expect(out.run.error?.data).toMatchObject({ failure: { fallback_strategy: 'abort', attempts: 3 } });
    const types = (await rt.store.readEvents({ runId: run.id })).map((e) => e.type);
    expect(types).not.toContain('attempt:retrying');
  });

  it('the protocol default for a missing output (use_default) still runs the task with null', async () => {
    rt = testRuntime();
    let received: unknown;
    const task = defineTask({
      name: 'reader',
      context: { plan: false },
      run: async (input: unknown) => {
        received = input;
        return 'read';
      },
    });
    const run = await rt.baton.start(task, {
      notes: { data_reference: { ref_type: 'task_output', task_id: 'no_such_run', path: '$.atoms' } },
    });
    expect((await run.result()).status).toBe('succeeded');
    expect(received).toEqual({ notes: null });
  });
});
