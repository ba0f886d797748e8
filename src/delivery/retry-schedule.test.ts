import { describe, expect, it } from 'vitest';
import { isBatonError, ValidationError } from '../core/index.ts';
import { DEFAULT_WEBHOOK_RETRY, type WebhookRetryOptions, webhookRetryDelay } from './index.ts';

function schedule(options?: WebhookRetryOptions): Array<number | undefined> {
  const out: Array<number | undefined> = [];
  for (let attempt = 1; attempt <= 12; attempt++) out.push(webhookRetryDelay(attempt, options));
  return out;
}

describe('webhookRetryDelay', () => {
  it('doubles from 1 s and gives up after the eighth attempt by default', () => {
    const waits = schedule();
    expect(waits.slice(0, 8)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, undefined]);
    expect(waits.slice(8).every((w) => w === undefined)).toBe(true);
    expect(DEFAULT_WEBHOOK_RETRY).toEqual({ baseMs: 1_000, factor: 2, maxMs: 300_000, maxAttempts: 8 });
  });

  it('caps the wait at maxMs', () => {
    expect(schedule({ baseMs: 10_000, factor: 3, maxMs: 60_000, maxAttempts: 6 })).toEqual([
      10_000,
      30_000,
      60_000,
      60_000,
      60_000,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('stays at maxMs instead of overflowing for very late attempts', () => {
    expect(webhookRetryDelay(5_000, { maxAttempts: 10_000 })).toBe(300_000);
  });

  it('waits a constant time with factor 1', () => {
    expect(schedule({ baseMs: 500, factor: 1, maxAttempts: 4 }).slice(0, 4)).toEqual([
      500,
      500,
      500,
      undefined,
    ]);
  });

  it('gives up at once with maxAttempts 1', () => {
    expect(webhookRetryDelay(1, { maxAttempts: 1 })).toBeUndefined();
  });

  it('honours a longer retry-after, even above maxMs, and ignores a shorter one', () => {
    expect(webhookRetryDelay(1, { retryAfterMs: 45_000 })).toBe(45_000);
    expect(webhookRetryDelay(1, { retryAfterMs: 3_600_000 })).toBe(3_600_000);
    expect(webhookRetryDelay(4, { retryAfterMs: 2_000 })).toBe(8_000);
    expect(webhookRetryDelay(1, { retryAfterMs: undefined })).toBe(1_000);
  });

  it('still gives up after maxAttempts when the receiver sends retry-after', () => {
    expect(webhookRetryDelay(8, { retryAfterMs: 1_000 })).toBeUndefined();
  });

  it('spreads waits between half and all of the computed wait with jitter', () => {
    expect(webhookRetryDelay(3, { jitter: () => 0 })).toBe(2_000);
    expect(webhookRetryDelay(3, { jitter: () => 1 })).toBe(4_000);
    expect(webhookRetryDelay(3, { jitter: () => 0.5 })).toBe(3_000);
    // retry-after is a floor the jitter cannot go below.
    expect(webhookRetryDelay(3, { jitter: () => 0, retryAfterMs: 3_500 })).toBe(3_500);
  });

  it.each([
    [{ baseMs: -1 }, 'options.baseMs must be a non-negative number of milliseconds, got -1'],
    [{ baseMs: Number.NaN }, 'options.baseMs must be a non-negative number of milliseconds, got NaN'],
    [{ factor: 0.5 }, 'options.factor must be a number ≥ 1, got 0.5'],
    [{ maxMs: 500 }, 'options.maxMs must be a number of milliseconds ≥ baseMs (1000), got 500'],
    [{ maxAttempts: 0 }, 'options.maxAttempts must be an integer ≥ 1, got 0'],
    [{ maxAttempts: 2.5 }, 'options.maxAttempts must be an integer ≥ 1, got 2.5'],
    [{ jitter: 0.3 }, 'options.jitter must be a function returning a number from 0 to 1, got 0.3'],
    [{ jitter: () => 1.5 }, 'options.jitter() must be a number from 0 to 1, got 1.5'],
    [{ retryAfterMs: -5 }, 'options.retryAfterMs must be a non-negative number of milliseconds, got -5'],
    [{ base: 1000 }, 'options.base must be absent (not a retry option)'],
  ])('refuses %o with a message naming the field', (options, message) => {
    let caught: unknown;
    try {
      webhookRetryDelay(1, options as WebhookRetryOptions);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as Error).message).toBe(message);
    expect(isBatonError(caught, 'INVALID_OPTION')).toBe(true);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses attempt %s', (attempt) => {
    expect(() => webhookRetryDelay(attempt)).toThrow('attempt must be an integer ≥ 1');
  });

  it('lets a base above the default cap through with no maxMs given', () => {
    expect(webhookRetryDelay(1, { baseMs: 600_000 })).toBe(600_000);
    expect(webhookRetryDelay(2, { baseMs: 600_000 })).toBe(600_000);
  });
});
