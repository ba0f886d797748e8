import { describe, expect, it } from 'vitest';
import { BatonError, ErrorCodes, ValidationError } from '../core/index.ts';
import { errorBody, errorResponse, HttpProblem, STATUS_BY_CODE, statusOf } from './wire-errors.ts';

describe('the error table', () => {
  it('gives every Baton error code an HTTP error status', () => {
    for (const code of ErrorCodes) {
      const status = STATUS_BY_CODE[code];
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
    }
    expect(Object.keys(STATUS_BY_CODE).sort()).toEqual([...ErrorCodes].sort());
  });

  it('maps bad input to 400, unknown ids to 404, conflicts to 409, the unexpected to 500', () => {
    expect(statusOf(new ValidationError('body.task', 'a string', 3))).toBe(400);
    expect(statusOf(new BatonError('TASK_NOT_FOUND', 'x'))).toBe(400);
    expect(statusOf(new BatonError('RUN_NOT_FOUND', 'x'))).toBe(404);
    expect(statusOf(new BatonError('RUN_CONFLICT', 'x'))).toBe(409);
    expect(statusOf(new TypeError('boom'))).toBe(500);
    expect(statusOf(new HttpProblem(413, 'BODY_TOO_LARGE', 'big'))).toBe(413);
  });
});

describe('errorBody', () => {
  it('has one shape: success false, the code, the message, and details from the error data', () => {
    expect(errorBody(new ValidationError('body.mode', '"sync" or "async"', 'later'))).toEqual({
      success: false,
      error: 'INVALID_INPUT',
      message: 'body.mode must be "sync" or "async", got "later"',
      details: { field: 'body.mode', expected: '"sync" or "async"' },
    });
    expect(errorBody(new BatonError('RUN_NOT_FOUND', 'no run with id r1'))).toEqual({
      success: false,
      error: 'RUN_NOT_FOUND',
      message: 'no run with id r1',
    });
  });

  it('keeps an internal error message but never its stack', async () => {
    const body = errorBody(new TypeError('cannot read x'));
    expect(body).toEqual({ success: false, error: 'UNKNOWN', message: 'internal error: cannot read x' });
    const response = errorResponse(new HttpProblem(401, 'UNAUTHORIZED', 'invalid bearer token'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toEqual({
      success: false,
      error: 'UNAUTHORIZED',
      message: 'invalid bearer token',
    });
  });
});
