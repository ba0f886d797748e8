import { describe, expect, it } from 'vitest';
import { ListQuery, parseRequest, StartBody } from './request-schemas.ts';

function failure(fn: () => unknown): { message: string; data: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    return err as { message: string; data: Record<string, unknown> };
  }
  throw new Error('expected a failure');
}

describe('parseRequest', () => {
  it('accepts a start body and a resume body', () => {
    expect(
      parseRequest(StartBody, { task: 'a', input: { x: 1 }, mode: 'async', timeoutMs: 5 }, 'body'),
    ).toEqual({
      task: 'a',
      input: { x: 1 },
      mode: 'async',
      timeoutMs: 5,
    });
    expect(parseRequest(StartBody, { resumeJobId: 'run_1' }, 'body')).toEqual({ resumeJobId: 'run_1' });
  });

  it('names every bad field with its path, and unknown fields by name', () => {
    const err = failure(() => parseRequest(StartBody, { task: 1, timeoutMs: -5, taks: 'x' }, 'body'));
    expect(err.data.field).toBe('body.task');
    expect(err.message).toMatch(/body\.task: .*expected string/);
    expect(err.message).toMatch(/body\.timeoutMs: /);
    expect(err.message).toMatch(/body\.taks: unknown field taks/);
    expect(failure(() => parseRequest(StartBody, [], 'body')).message).toMatch(/^body: .*expected object/);
  });

  it('reads numbers from the query string, within range', () => {
    expect(parseRequest(ListQuery, { limit: '20', status: 'queued' }, 'query')).toEqual({
      limit: 20,
      status: 'queued',
    });
    expect(failure(() => parseRequest(ListQuery, { limit: '2000' }, 'query')).data.field).toBe('query.limit');
    expect(failure(() => parseRequest(ListQuery, { limit: 'ten' }, 'query')).message).toMatch(
      /query\.limit: expected an integer/,
    );
  });
});
