import { describe, expect, it } from 'vitest';
import {
  BatonError,
  deserializeError,
  NonRetriableError,
  RetryAfterError,
  serializeError,
} from '../errors.ts';
import { compileRetryPolicy, FAST_MODE_WARNING } from './retry-policy.ts';

const timeout = new BatonError('TIMEOUT', 'attempt timed out');

function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('compileRetryPolicy defaults', () => {
  const policy = compileRetryPolicy({ mode: 'external' });

  it('grows the timeout ×1, ×2, ×3 over three attempts and waits 5 s then 15 s', () => {
    expect([1, 2, 3].map((a) => policy.attemptTimeoutMs(a))).toEqual([120_000, 240_000, 360_000]);
    expect([1, 2].map((r) => policy.backoffMs(r))).toEqual([5_000, 15_000]);
    expect(policy.maxAttempts).toBe(3);
    expect(policy.warning).toBeUndefined();
  });

  it('retries twice, then escalates', () => {
    expect(policy.nextStep({ attempt: 1, error: timeout })).toEqual({
      kind: 'retry',
      attempt: 2,
      waitMs: 5_000,
      timeoutMs: 240_000,
    });
    expect(policy.nextStep({ attempt: 2, error: timeout })).toEqual({
      kind: 'retry',
      attempt: 3,
      waitMs: 15_000,
      timeoutMs: 360_000,
    });
    expect(policy.nextStep({ attempt: 3, error: timeout })).toEqual({
      kind: 'escalate',
      reason: 'retries_exhausted',
      menu: 'exhausted',
    });
  });

  it('fails at once on a non-retriable error, also after a round trip through the store', () => {
    const err = new NonRetriableError('bad credentials');
    expect(policy.nextStep({ attempt: 1, error: err })).toEqual({ kind: 'fail', reason: 'non_retriable' });
    expect(policy.nextStep({ attempt: 1, error: deserializeError(serializeError(err)) }).kind).toBe('fail');
  });

  it('waits at least as long as a RetryAfterError asks', () => {
    expect(policy.nextStep({ attempt: 1, error: new RetryAfterError('rate limited', 30_000) })).toMatchObject(
      { waitMs: 30_000 },
    );
    expect(policy.nextStep({ attempt: 1, error: new RetryAfterError('soon', 1_000) })).toMatchObject({
      waitMs: 5_000,
    });
  });

  it('keeps retrying a partial result in normal mode', () => {
    expect(policy.nextStep({ attempt: 1, error: timeout, partial: { findings: [1, 2, 3] } }).kind).toBe(
      'retry',
    );
  });

  it('keeps attempts inside the per-agent timeout', () => {
    const tight = compileRetryPolicy({ mode: 'dual', agentTimeoutMs: 600_000 });
    expect(tight.attemptTimeoutMs(3)).toBe(540_000);
    // 180 s + 5 s spent: 415 s left, so retry 1 gets 360 s; after 180+5+360+15 s only 40 s would be left.
    expect(tight.nextStep({ attempt: 1, error: timeout, elapsedMs: 180_000 })).toMatchObject({
      timeoutMs: 360_000,
    });
    expect(tight.nextStep({ attempt: 2, error: timeout, elapsedMs: 545_000 })).toEqual({
      kind: 'escalate',
      reason: 'agent_timeout',
      menu: 'exhausted',
    });
    expect(compileRetryPolicy({ mode: 'dual', agentTimeoutMs: 400_000 }).attemptTimeoutMs(3)).toBe(400_000);
  });

  it('uses the per-agent timeout as the base when neither a mode nor a timeout is given', () => {
    expect(compileRetryPolicy().attemptTimeoutMs(1)).toBe(2_880_000);
  });

  it('repeats the last multiplier and backoff when more retries are allowed', () => {
    const many = compileRetryPolicy({ timeoutMs: 1_000, maxRetries: 4 });
    expect([1, 2, 3, 4, 5].map((a) => many.attemptTimeoutMs(a))).toEqual([1_000, 2_000, 3_000, 3_000, 3_000]);
    expect(many.backoffMs(4)).toBe(15_000);
    expect(many.nextStep({ attempt: 4, error: timeout }).kind).toBe('retry');
  });
});

describe('compileRetryPolicy in fast mode', () => {
  const fast = compileRetryPolicy({ mode: 'external' }, { fast: true });

  it('halves the timeouts, allows one retry after 2 s, and shows the protocol warning', () => {
    expect([1, 2].map((a) => fast.attemptTimeoutMs(a))).toEqual([60_000, 120_000]);
    expect(fast.maxAttempts).toBe(2);
    expect(fast.nextStep({ attempt: 1, error: timeout })).toEqual({
      kind: 'retry',
      attempt: 2,
      waitMs: 2_000,
      timeoutMs: 120_000,
    });
    expect(fast.nextStep({ attempt: 2, error: timeout }).kind).toBe('escalate');
    expect(fast.backoffMs(2)).toBe(5_000);
    expect(fast.warning).toBe(
      'Fast mode: Research timeouts reduced by 50%\nResearch quality may be lower. For thorough research, omit --fast-mode.',
    );
    expect(fast.warning).toBe(FAST_MODE_WARNING);
  });

  it('accepts partial results at once instead of retrying', () => {
    expect(fast.nextStep({ attempt: 1, error: timeout, partial: { findings: ['a'] } })).toEqual({
      kind: 'escalate',
      reason: 'partial_accepted',
      menu: 'timeout',
    });
    expect(fast.nextStep({ attempt: 1, error: timeout, partial: { findings: [] } }).kind).toBe('retry');
  });

  it('halves an explicit timeout too, and lets explicit options win over fast defaults', () => {
    const custom = compileRetryPolicy(
      { timeoutMs: 10_000, maxRetries: 2, acceptPartial: false },
      { fast: true },
    );
    expect(custom.attemptTimeoutMs(1)).toBe(5_000);
    expect(custom.maxAttempts).toBe(3);
    expect(custom.acceptPartial).toBe(false);
  });
});

describe('compileRetryPolicy rejects bad options, naming the field', () => {
  const cases: Array<[object, string]> = [
    [{ timeoutMultipliers: [2, 0] }, 'retry.timeoutMultipliers[1] must be ≥ 1, got 0'],
    [
      { timeoutMultipliers: [] },
      'retry.timeoutMultipliers must be a non-empty array of numbers ≥ 1, got an array of 0',
    ],
    [{ timeoutMultipliers: [2, '3'] }, 'retry.timeoutMultipliers[1] must be a number ≥ 1, got "3"'],
    [{ timeoutMs: -1_000 }, 'retry.timeoutMs must be a number of milliseconds > 0, got -1000'],
    [{ backoffMs: [5_000, -1] }, 'retry.backoffMs[1] must be ≥ 0, got -1'],
    [{ mode: 'web' }, 'retry.mode must be one of "codebase", "docs", "external", "dual", got "web"'],
    [{ maxRetries: 1.5 }, 'retry.maxRetries must be an integer ≥ 0, got 1.5'],
    [{ agentTimeoutMs: 0 }, 'retry.agentTimeoutMs must be a number of milliseconds > 0, got 0'],
    [{ acceptPartial: 'yes' }, 'retry.acceptPartial must be a boolean, got "yes"'],
    [{ backof: [1] }, 'retry.backof must be a known option ('],
  ];
  it.each(cases)('%j', (options, message) => {
    const err = thrownBy(() => compileRetryPolicy(options as never));
    expect(err.message.startsWith(message)).toBe(true);
    expect(err).toMatchObject({ code: 'INVALID_OPTION' });
  });

  it('rejects an attempt number that is not a positive integer', () => {
    expect(() => compileRetryPolicy().nextStep({ attempt: 0, error: timeout })).toThrow(
      'attempt must be an integer ≥ 1, got 0',
    );
    expect(() => compileRetryPolicy().backoffMs(0)).toThrow('retryIndex must be an integer ≥ 1, got 0');
  });
});
