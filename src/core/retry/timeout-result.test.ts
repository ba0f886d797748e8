import { describe, expect, it } from 'vitest';
import { timeoutResult, timeoutResultSchema } from './timeout-result.ts';

describe('timeoutResult', () => {
  it('captures the partial findings in the protocol format', () => {
    const findings = [{ title: 'a' }, { title: 'b' }, { title: 'c' }];
    const result = timeoutResult({
      findings,
      timedOutAtMs: Date.parse('2026-01-16T14:30:00Z'),
      timeoutMs: 60_000,
    });
    expect(result).toEqual({
      status: 'timeout',
      partial: true,
      findings,
      search_exhausted: false,
      timed_out_at: '2026-01-16T14:30:00Z',
      timeout_duration_seconds: 60,
    });
    expect(result.findings).not.toBe(findings); // a snapshot: later pushes by the agent do not change it
    expect(timeoutResultSchema.parse(result)).toEqual(result);
  });

  it('records whether the search was exhausted', () => {
    expect(
      timeoutResult({ findings: [], searchExhausted: true, timedOutAtMs: 0, timeoutMs: 45_000 }),
    ).toMatchObject({
      search_exhausted: true,
      timeout_duration_seconds: 45,
      timed_out_at: '1970-01-01T00:00:00Z',
    });
  });

  it('reports an attempt that had no time left as a 0 s timeout', () => {
    const result = timeoutResult({ findings: [1], timedOutAtMs: 0, timeoutMs: 0 });
    expect(result).toMatchObject({ partial: true, findings: [1], timeout_duration_seconds: 0 });
    expect(timeoutResultSchema.parse(result)).toEqual(result);
  });

  it('names the field on bad input', () => {
    expect(() => timeoutResult({ findings: [], timedOutAtMs: 0, timeoutMs: -1 })).toThrow(
      'timeoutMs must be a number of milliseconds ≥ 0, got -1',
    );
    expect(() => timeoutResult({ findings: [], timedOutAtMs: Number.NaN, timeoutMs: 1 })).toThrow(
      /^timedOutAtMs must be/,
    );
    expect(() => timeoutResult({ findings: 'x' as never, timedOutAtMs: 0, timeoutMs: 1 })).toThrow(
      'findings must be an array',
    );
  });
});
