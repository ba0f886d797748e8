import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../store/index.ts';
import { resultResponse, type SyncWait, settledResponse, timeoutCode } from './sync-outcome.ts';

function run(patch: Partial<RunRecord>): RunRecord {
  return {
    id: 'run_1',
    parentId: null,
    rootId: 'run_1',
    stepId: null,
    kind: 'task',
    name: 'insights',
    input: {},
    status: 'succeeded',
    waitReason: null,
    wakeAt: null,
    attempt: 1,
    dependsOn: [],
    priority: 0,
    createdAt: 1_000,
    startedAt: 1_000,
    finishedAt: 5_000,
    updatedAt: 5_000,
    budgetMs: null,
    deadlineAt: null,
    output: null,
    error: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    leaseToken: 1,
    source: null,
    options: {},
    meta: {},
    expiresAt: null,
    ...patch,
  };
}

const wait: SyncWait = { jobId: 'run_1', arrivedAt: 0, waitMs: 61_000, signal: undefined };
const json = (r: Response) => r.json() as Promise<Record<string, unknown>>;

describe('answers from a settled run', () => {
  it('a plain task: the output, with the run time as duration and no agent counters', async () => {
    const r = resultResponse(run({ output: { n: 4 } }), false);
    expect(r.status).toBe(200);
    expect(await json(r)).toEqual({
      success: true,
      result: { n: 4 },
      metadata: { mode: 'sync', jobId: 'run_1', durationMs: 4_000, wasResumed: false },
    });
  });

  it('a partial run is a success marked partial', async () => {
    const r = settledResponse(
      {
        run: run({ status: 'partial', output: { findings: [1] } }),
        decisions: [],
        deadlinePassed: false,
        waitedMs: 10,
      },
      wait,
      false,
    );
    expect(r.status).toBe(200);
    expect(await json(r)).toMatchObject({ success: true, partial: true, result: { findings: [1] } });
  });

  it('a parked agent job: the protocol 408 from the invocation it recorded', async () => {
    const parked = run({
      status: 'waiting',
      waitReason: 'resume',
      meta: {
        invocation: {
          turns: 8,
          toolCalls: 12,
          durationMs: 55_012,
          timeoutMs: 60_000,
          wasResumed: true,
          canResume: true,
        },
      },
    });
    const r = settledResponse(
      { run: parked, decisions: [], deadlinePassed: false, waitedMs: 55_100 },
      wait,
      true,
    );
    expect(r.status).toBe(408);
    expect(await json(r)).toEqual({
      success: false,
      error: timeoutCode('insights'),
      message:
        'insights timed out after 60000ms. A checkpoint was saved - retry with resumeJobId to continue.',
      details: { jobId: 'run_1', canResume: true, wasResumed: true, durationMs: 55_012, timeoutMs: 60_000 },
    });
  });

  it('a run waiting for a decision: 202 with the question', async () => {
    const asking = run({
      status: 'waiting',
      waitReason: 'decision',
      meta: { decision: { request: { message: 'Continue?' } } },
    });
    const decisions = [{ runId: 'run_1', stepId: null, request: { message: 'Continue?' } as never }];
    const r = settledResponse({ run: asking, decisions, deadlinePassed: false, waitedMs: 1 }, wait, false);
    expect(r.status).toBe(202);
    expect(await json(r)).toEqual({
      success: true,
      jobId: 'run_1',
      status: 'waiting',
      waitReason: 'decision',
      decision: { message: 'Continue?' },
    });
  });

  it('a cancelled run without an error: 422 CANCELLED', async () => {
    const r = settledResponse(
      { run: run({ status: 'cancelled' }), decisions: [], deadlinePassed: false, waitedMs: 1 },
      wait,
      false,
    );
    expect(r.status).toBe(422);
    expect(await json(r)).toMatchObject({
      success: false,
      error: 'CANCELLED',
      details: { jobId: 'run_1', status: 'cancelled' },
    });
  });
});
