import { afterEach, describe, expect, it } from 'vitest';
import { NonRetriableError } from '../core/index.ts';
import { defineFlow, defineTask } from '../runtime/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createHttpHandler, type HttpHandler } from './create-http-handler.ts';
import { agentJob, drive, evenScript } from './fixtures/agent-jobs.ts';
import type { HttpOptions } from './http-options.ts';

let rt: TestRuntime | undefined;
let handler: HttpHandler | undefined;
afterEach(async () => {
  handler?.close();
  await rt?.dispose();
  rt = undefined;
});

const slow = defineTask({
  name: 'slow',
  timeout: '10m',
  run: (_: unknown, ctx) => ctx.delay(120_000).then(() => 'late'),
});
const broken = defineTask({
  name: 'broken',
  run: async () => {
    throw new NonRetriableError('401 from the provider');
  },
});
const double = defineTask({ name: 'double', run: async (input: { n: number }) => input.n * 2 });

function setup(options: HttpOptions = {}, worker = true) {
  rt = testRuntime(worker ? {} : { worker: false });
  rt.baton.register(slow, broken, double);
  handler = createHttpHandler(rt.baton, options);
  const h = handler;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await h(
      new Request(`http://baton.test${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      }),
    );
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return { rt, call };
}

describe('sync mode', () => {
  it('answers 408 when its wait ends before the run, and a resume meanwhile is 409 naming the worker', async () => {
    const { rt, call } = setup();
    const answer = await drive(rt.clock, call('POST', '/runs', { task: 'slow', timeoutMs: 2_000 }), 250);
    expect(answer.status).toBe(408);
    const details = answer.body.details as { jobId: string; durationMs: number };
    expect(answer.body).toEqual({
      success: false,
      error: 'slow_timeout',
      message: 'slow timed out after 2000ms. The job is still running - retry with resumeJobId to continue.',
      details: {
        jobId: details.jobId,
        canResume: true,
        wasResumed: false,
        durationMs: details.durationMs,
        timeoutMs: 2_000,
      },
    });
    expect(details.durationMs).toBeGreaterThanOrEqual(2_000);
    const conflict = await call('POST', `/runs/${details.jobId}/resume`);
    expect(conflict.status).toBe(409);
    const holder = (conflict.body.details as { holder: string }).holder;
    expect(holder).toBe(rt.baton.worker?.id);
    expect(conflict.body.message).toContain(holder);
  });

  it('never waits longer than the server maximum', async () => {
    const { rt, call } = setup({ maxSyncWaitMs: 1_000 });
    const answer = await drive(rt.clock, call('POST', '/runs', { task: 'slow', timeoutMs: 60_000 }), 250);
    expect(answer.status).toBe(408);
    expect(answer.body.details).toMatchObject({ timeoutMs: 1_000 });
  });

  it('answers 422 with the error code when the run fails', async () => {
    const { rt, call } = setup();
    const answer = await drive(rt.clock, call('POST', '/runs', { task: 'broken', mode: 'sync' }));
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      success: false,
      error: 'NON_RETRIABLE',
      message: '401 from the provider',
      details: { status: 'failed' },
    });
  });
});

describe('async mode and resume locks', () => {
  it('answers 202 with the job id; a resume of a job nobody claimed yet is 409 held by "queued"', async () => {
    const { call } = setup({}, false);
    const accepted = await call('POST', '/runs', { task: 'double', input: { n: 2 }, mode: 'async' });
    expect(accepted).toEqual({
      status: 202,
      body: { success: true, jobId: expect.stringMatching(/^run_/), status: 'queued' },
    });
    const jobId = accepted.body.jobId as string;
    const resumed = await call('POST', `/runs/${jobId}/resume?mode=async`);
    expect(resumed.status).toBe(409);
    expect(resumed.body).toMatchObject({ error: 'RUN_CONFLICT', details: { holder: 'queued' } });
    expect(resumed.body.message).toMatch(/queued/);
  });

  it('keeps the serverless invocation cap with the runs it starts', async () => {
    const { rt, call } = setup({ invocationTimeoutMs: 9_000 }, false);
    const accepted = await call('POST', '/runs', { task: 'double', input: { n: 2 }, mode: 'async' });
    const run = await rt.baton.getRun(accepted.body.jobId as string);
    expect(run?.options).toMatchObject({ invocationTimeoutMs: 9_000 });
  });
});

describe('routing', () => {
  it('serves under a base path', async () => {
    const { call } = setup({ basePath: '/api' });
    expect((await call('GET', '/api/runs')).status).toBe(200);
    expect(await call('GET', '/runs')).toMatchObject({ status: 404, body: { error: 'ROUTE_NOT_FOUND' } });
  });

  it('starts a registered flow by name, and says which flows exist when the name is unknown', async () => {
    const flow = defineFlow({ name: 'twice', steps: [{ id: 'a', task: double, input: { n: 3 } }] });
    const { rt, call } = setup({ flows: [flow] });
    const done = await drive(rt.clock, call('POST', '/runs', { flow: 'twice', input: {} }));
    expect(done).toMatchObject({ status: 200, body: { success: true, result: { a: 6 } } });
    const unknown = await call('POST', '/runs', { flow: 'thrice' });
    expect(unknown).toMatchObject({
      status: 400,
      body: { error: 'TASK_NOT_FOUND', details: { field: 'body.flow' } },
    });
    expect(unknown.body.message).toMatch(/registered: twice/);
  });
});

describe("protocol 003's request and answer", () => {
  it('takes the flat body at POST /tasks/:name and answers with insights and usedFunctionCalling', async () => {
    const { rt, call } = setup();
    const seen: unknown[] = [];
    const job = agentJob(rt.clock, evenScript(3, 1_000), {
      prompt: (input: unknown) => {
        seen.push(input);
        return 'Provide comprehensive battery analysis';
      },
    });
    rt.baton.register(job.task);
    const body = {
      systemId: 'sys_123',
      customPrompt: 'Provide comprehensive battery analysis',
      mode: 'sync',
    };
    const answer = await drive(rt.clock, call('POST', '/tasks/insights', body), 250);
    expect(answer.status).toBe(200);
    expect(seen).toEqual([{ systemId: 'sys_123', customPrompt: 'Provide comprehensive battery analysis' }]);
    expect(answer.body).toMatchObject({
      success: true,
      insights: { rawText: 'done after 3 turns', contextSummary: {} },
      metadata: { mode: 'sync', turns: 3, toolCalls: 2, wasResumed: false, usedFunctionCalling: true },
    });
    const jobId = (answer.body.metadata as { jobId: string }).jobId;
    // The resume form at the same URL: a finished job answers with its cached result.
    const again = await call('POST', '/tasks/insights', { resumeJobId: jobId });
    expect(again).toMatchObject({ status: 200, body: { insights: { rawText: 'done after 3 turns' } } });
    const mixed = await call('POST', '/tasks/insights', { resumeJobId: jobId, systemId: 'x' });
    expect(mixed.status).toBe(400);
    expect(JSON.stringify(mixed.body)).toContain('body.systemId cannot be given with body.resumeJobId');
    const unknown = await call('POST', '/tasks/nope', { systemId: 'x', mode: 'async' });
    expect(unknown).toMatchObject({ status: 400, body: { error: 'TASK_NOT_FOUND' } });
  });
});
