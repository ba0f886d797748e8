import { describe, expect, it } from 'vitest';
import { emptyTimeoutState, reduceTimeoutState, type StepOutcome, trackTimeouts } from './timeout-state.ts';

const ok = (mode: string): StepOutcome => ({
  mode,
  finalStatus: 'completed',
  attempts: [{ timeoutMs: 60_000, timedOut: false }],
});

describe('trackTimeouts', () => {
  it('builds the protocol example: one external agent ended partial after two retries', () => {
    const external: StepOutcome = {
      mode: 'external',
      finalStatus: 'partial',
      attempts: [
        { timeoutMs: 120_000, timedOut: true },
        { timeoutMs: 240_000, timedOut: true },
        { timeoutMs: 360_000, timedOut: true },
      ],
    };
    expect(trackTimeouts([ok('codebase'), ok('docs'), external])).toEqual({
      agents_spawned: 3,
      agents_completed: 2,
      agents_timed_out: 1,
      timeout_details: [{ mode: 'external', timeout_at: 120, retries: 2, final_status: 'partial' }],
      overall_status: 'partial',
    });
  });

  it('lists a step that timed out and then completed, and stays complete', () => {
    const recovered: StepOutcome = {
      mode: 'docs',
      finalStatus: 'completed',
      attempts: [
        { timeoutMs: 90_000, timedOut: true },
        { timeoutMs: 180_000, timedOut: false },
      ],
    };
    const state = trackTimeouts([ok('codebase'), recovered]);
    expect(state).toMatchObject({ agents_completed: 2, agents_timed_out: 1, overall_status: 'complete' });
    expect(state.timeout_details).toEqual([
      { mode: 'docs', timeout_at: 90, retries: 1, final_status: 'completed' },
    ]);
  });

  it('is failed when no step produced anything usable, partial when some did', () => {
    const failed: StepOutcome = {
      mode: 'external',
      finalStatus: 'failed',
      attempts: [{ timeoutMs: 1, timedOut: false }],
    };
    const skipped: StepOutcome = { ...failed, finalStatus: 'skipped' };
    expect(trackTimeouts([failed, skipped]).overall_status).toBe('failed');
    expect(trackTimeouts([failed, ok('docs')]).overall_status).toBe('partial');
    expect(trackTimeouts([ok('docs'), failed]).overall_status).toBe('partial');
    expect(trackTimeouts([]).overall_status).toBe('complete');
  });

  it('reduces without changing the state it was given', () => {
    const before = trackTimeouts([ok('a')]);
    const copy = structuredClone(before);
    reduceTimeoutState(before, {
      mode: 'b',
      finalStatus: 'partial',
      attempts: [{ timeoutMs: 1000, timedOut: true }],
    });
    expect(before).toEqual(copy);
    expect(reduceTimeoutState(emptyTimeoutState(), ok('c'))).toEqual(trackTimeouts([ok('c')]));
  });

  it('names the step and field on bad input', () => {
    expect(() => trackTimeouts([ok('a'), { mode: 'b', finalStatus: 'done' as never, attempts: [] }])).toThrow(
      'steps[1].finalStatus must be one of "completed", "partial", "skipped", "failed", got "done"',
    );
    expect(() => trackTimeouts([{ mode: 'b', finalStatus: 'failed', attempts: [] }])).toThrow(
      'steps[0].attempts must be a non-empty array, got an array of 0',
    );
  });
});
