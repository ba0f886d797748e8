import { afterEach, describe, expect, it } from 'vitest';
import { agentJob, drive, evenScript } from '../http/fixtures/agent-jobs.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createServerlessHandler, type ServerlessHandler } from './create-serverless-handler.ts';

let rt: TestRuntime | undefined;
let handler: ServerlessHandler | undefined;
afterEach(async () => {
  handler?.close();
  await rt?.dispose();
  rt = undefined;
  handler = undefined;
});

describe('createServerlessHandler', () => {
  it('answers by limit − margin and names tasks whose own timeout is longer', () => {
    rt = testRuntime({ worker: false });
    rt.baton.register(agentJob(rt.clock, evenScript(3, 1), { name: 'fits', timeout: '20s' }).task);
    rt.baton.register(agentJob(rt.clock, evenScript(3, 1), { name: 'protocol-default' }).task);
    handler = createServerlessHandler(rt.baton, { limitMs: '26s' });
    expect(handler.deadlineMs).toBe(21_000);
    expect(handler.tasksOverDeadline()).toEqual(['protocol-default']);
  });

  it('refuses a margin that leaves no time, naming the field', () => {
    rt = testRuntime({ worker: false });
    const baton = rt.baton;
    expect(() => createServerlessHandler(baton, { limitMs: 5_000 })).toThrow(
      /^safetyMarginMs \(5000\) must be below limitMs \(5000\)/,
    );
    expect(() => createServerlessHandler(baton, { limitMs: 'soon' })).toThrow(
      /^limitMs must be a whole number of milliseconds/,
    );
    expect(() => createServerlessHandler(baton, {} as never)).toThrow(/^limitMs is required/);
  });

  it('answers a sync request with the 408 before the deadline, with the checkpoint saved', async () => {
    rt = testRuntime();
    // A 10 s function with a 2 s margin: the agent gets 8 s and saves its checkpoint 1 s before that.
    const job = agentJob(rt.clock, evenScript(10, 1_500), { timeout: '8s', checkpointBeforeDeadline: '1s' });
    rt.baton.register(job.task);
    handler = createServerlessHandler(rt.baton, { limitMs: '10s', safetyMarginMs: '2s' });
    const h = handler;
    const clock = rt.clock;
    const started = clock.monotonic();
    const response = await drive(
      clock,
      h(
        new Request('http://fn.test/runs', {
          method: 'POST',
          body: '{"task":"insights"}',
          headers: { 'content-type': 'application/json' },
        }),
      ),
    );
    expect(clock.monotonic() - started).toBeLessThanOrEqual(8_000);
    expect(response.status).toBe(408);
    const body = (await response.json()) as { details: { jobId: string; timeoutMs: number } };
    expect(body.details.timeoutMs).toBe(8_000);
    const checkpoint = await rt.store.getLastCheckpoint(body.details.jobId);
    expect(checkpoint?.state).toMatchObject({ turnCount: 5 });
  });

  it('refuses unknown keys, and the options it sets itself from the limit, by name', () => {
    rt = testRuntime({ worker: false });
    const baton = rt.baton;
    expect(() => createServerlessHandler(baton, { limitMs: '26s', safetyMargin: '2s' } as never)).toThrow(
      /^serverless options\.safetyMargin is not an option \(did you mean "safetyMarginMs"\?\)/,
    );
    expect(() => createServerlessHandler(baton, { limitMs: '26s', maxSyncWaitMs: 60_000 } as never)).toThrow(
      /^serverless options\.maxSyncWaitMs is not an option/,
    );
  });
});
