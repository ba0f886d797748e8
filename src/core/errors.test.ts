import { describe, expect, it } from 'vitest';
import {
  BatonError,
  deserializeError,
  isBatonError,
  NonRetriableError,
  RetryAfterError,
  serializeError,
  ValidationError,
} from './errors.ts';

describe('errors', () => {
  it('survive a JSON round trip with code, data, cause and class', () => {
    const err = new RetryAfterError('rate limited', 5_000, { cause: new Error('429') });
    const back = deserializeError(JSON.parse(JSON.stringify(serializeError(err))));
    expect(back).toBeInstanceOf(RetryAfterError);
    expect(back.code).toBe('RETRY_AFTER');
    expect((back as RetryAfterError).retryAfterMs).toBe(5_000);
    expect((back.cause as BatonError).message).toBe('429');
    expect(deserializeError(serializeError(new NonRetriableError('no')))).toBeInstanceOf(NonRetriableError);
  });

  it('name the field, the expectation and what was received', () => {
    const err = new ValidationError('retry.timeoutMultipliers[1]', 'a number ≥ 1', 0, {
      code: 'INVALID_OPTION',
    });
    expect(err.message).toBe('retry.timeoutMultipliers[1] must be a number ≥ 1, got 0');
    expect(err.code).toBe('INVALID_OPTION');
    expect(err.data).toEqual({ field: 'retry.timeoutMultipliers[1]', expected: 'a number ≥ 1' });
  });

  it('leave the stack out when asked, and only then', () => {
    const limit = Error.stackTraceLimit;
    const quiet = new BatonError('TIMEOUT', 'attempt timed out after 50 ms', { stack: false });
    expect(quiet.stack).toBe('BatonError: attempt timed out after 50 ms');
    expect(serializeError(quiet).stack).toBe('BatonError: attempt timed out after 50 ms');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new BatonError('TIMEOUT', 'x').stack).toMatch(/\n\s+at /);
  });

  it('serialize foreign throwables as UNKNOWN', () => {
    expect(serializeError('boom')).toEqual({ name: 'Error', code: 'UNKNOWN', message: '"boom"' });
    expect(deserializeError({ name: 'X', code: 'NOT_A_CODE' as never, message: 'm' }).code).toBe('UNKNOWN');
  });
});

describe('errors from another copy of Baton', () => {
  it('are recognised by code, as a task module loaded separately throws them', () => {
    class OtherBatonError extends Error {
      readonly code = 'TIMEOUT';
      readonly data = Object.freeze({ resumable: true });
    }
    const err = new OtherBatonError('timed out');
    expect(isBatonError(err, 'TIMEOUT')).toBe(true);
    expect(serializeError(err)).toMatchObject({ code: 'TIMEOUT', data: { resumable: true } });
    expect(isBatonError(new Error('plain'))).toBe(false);
  });
});
