import { describe, expect, it } from 'vitest';
import { estimateRemainingMs } from './estimate-remaining.ts';

describe('estimateRemainingMs', () => {
  it('with a turn limit: the turns left at the rate so far, plus the next backoff', () => {
    // 8 turns in 55 s; 10 more to the limit of 18 at that rate is 68.75 s.
    expect(
      estimateRemainingMs({ turns: 8, maxTurns: 18, invocations: 1, invocationMs: 55_000, nextDelayMs: 250 }),
    ).toBe(69_000);
    expect(
      estimateRemainingMs({ turns: 18, maxTurns: 18, invocations: 2, invocationMs: 85_000, nextDelayMs: 0 }),
    ).toBe(0);
  });

  it('without one: one more invocation of the average length so far', () => {
    expect(
      estimateRemainingMs({
        turns: null,
        maxTurns: undefined,
        invocations: 2,
        invocationMs: 110_000,
        nextDelayMs: 500,
      }),
    ).toBe(55_500);
    expect(
      estimateRemainingMs({
        turns: 8,
        maxTurns: undefined,
        invocations: 1,
        invocationMs: 55_000,
        nextDelayMs: 0,
      }),
    ).toBe(55_000);
  });

  it('is null before anything was measured', () => {
    expect(
      estimateRemainingMs({ turns: null, maxTurns: 10, invocations: 0, invocationMs: 0, nextDelayMs: 0 }),
    ).toBeNull();
  });
});
