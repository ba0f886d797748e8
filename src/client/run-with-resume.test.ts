import { describe, expect, it } from 'vitest';
import { drive } from '../http/fixtures/agent-jobs.ts';
import { ManualClock } from '../time/index.ts';
import { BatonHttpError } from './http-error.ts';
import { backoffMs, type RunProgress, resumeUntilDone } from './run-with-resume.ts';
import type { RunDetails, SyncAnswer } from './wire-types.ts';

const timeout = (durationMs: number): SyncAnswer => ({
  kind: 'timeout',
  body: {
    success: false,
    error: 'insights_timeout',
    message: 'insights timed out after 60000ms. A checkpoint was saved - retry with resumeJobId to continue.',
    details: { jobId: 'job1', canResume: true, wasResumed: false, durationMs, timeoutMs: 60_000 },
  },
});
const result: SyncAnswer = {
  kind: 'result',
  body: {
    success: true,
    result: 'ok',
    metadata: { mode: 'sync', jobId: 'job1', turns: 18, toolCalls: 25, durationMs: 30_000, wasResumed: true },
  },
};
const conflict = () =>
  new BatonHttpError(409, 'RUN_CONFLICT', 'run job1 is already running, held by w1', { holder: 'w1' });
const details = (turns: number) =>
  ({ run: { meta: { invocation: { turns, toolCalls: turns } } } }) as unknown as RunDetails;

describe('backoffMs', () => {
  it('grows by the factor up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs({}, n))).toEqual([
      250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect(backoffMs({ initialMs: 100, factor: 3, maxMs: 500 }, 3)).toBe(500);
  });
});

describe('resumeUntilDone', () => {
  it('resumes after each 408 with backoff and waits out a 409, then returns the result', async () => {
    const clock = new ManualClock();
    const answers: Array<SyncAnswer | Error> = [timeout(55_000), conflict(), result];
    const resumedAt: number[] = [];
    const progress: RunProgress[] = [];
    const done = await drive(
      clock,
      resumeUntilDone(
        {
          clock,
          resume: async () => {
            resumedAt.push(clock.monotonic());
            const next = answers.shift() as SyncAnswer | Error;
            if (next instanceof Error) throw next;
            return next;
          },
          get: async () => details(8),
        },
        timeout(55_000),
        { maxTurns: 18, onProgress: (p) => progress.push(p) },
      ),
      50,
    );
    expect(done).toMatchObject({ status: 'succeeded', jobId: 'job1', result: 'ok', requests: 4, resumes: 3 });
    expect(resumedAt).toEqual([250, 750, 1750]);
    expect(progress.map((p) => p.phase)).toEqual([
      'timeout',
      'resuming',
      'timeout',
      'resuming',
      'conflict',
      'resuming',
      'done',
    ]);
    expect(progress[0]).toMatchObject({ turns: 8, requests: 1, estimatedRemainingMs: 69_000 });
    expect(progress.at(-1)).toMatchObject({ turns: 18, toolCalls: 25, estimatedRemainingMs: 0 });
  });

  it('gives up after maxResumes with the last 408 as the error', async () => {
    const clock = new ManualClock();
    const err = await drive(
      clock,
      resumeUntilDone(
        { clock, resume: async () => timeout(1_000), get: async () => details(1) },
        timeout(1_000),
        {
          maxResumes: 2,
        },
      ).catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(BatonHttpError);
    expect(err).toMatchObject({ status: 408, errorCode: 'insights_timeout', details: { jobId: 'job1' } });
    expect((err as Error).message).toMatch(/^gave up after 2 resumes: insights timed out/);
  });

  it('does not retry other errors, and stops when the signal aborts', async () => {
    const clock = new ManualClock();
    const gone = new BatonHttpError(404, 'RUN_NOT_FOUND', 'no run with id job1');
    const err = await drive(
      clock,
      resumeUntilDone(
        { clock, resume: async () => Promise.reject(gone), get: async () => details(1) },
        timeout(1),
      ).catch((e: unknown) => e),
    );
    expect(err).toBe(gone);
    const stop = new AbortController();
    stop.abort(new Error('user left'));
    const aborted = await resumeUntilDone(
      { clock, resume: async () => result, get: async () => details(1) },
      timeout(1),
      {
        signal: stop.signal,
      },
    ).catch((e: unknown) => e);
    expect((aborted as Error).message).toBe('user left');
  });
});
