/**
 * The six scenarios of protocol 001, "Testing Timeout Handling", as pure-rule tests: each drives the
 * rules the engine will call, in the order it will call them.
 */
import { describe, expect, it } from 'vitest';
import { BatonError } from '../errors.ts';
import { decideByPolicy, resolveDecision } from './decision.ts';
import { buildDecisionRequest } from './escalation-request.ts';
import { compileRetryPolicy } from './retry-policy.ts';
import { timeoutResult } from './timeout-result.ts';
import { type StepOutcome, trackTimeouts } from './timeout-state.ts';

const T0 = Date.parse('2026-01-16T14:29:00Z');
const timeout = new BatonError('TIMEOUT', 'attempt timed out');

describe('protocol 001 timeout scenarios', () => {
  it('1. an agent times out and its partial results are captured correctly', () => {
    const policy = compileRetryPolicy({ mode: 'codebase' });
    const timeoutMs = policy.attemptTimeoutMs(1);
    const found = ['f1', 'f2', 'f3'];
    const result = timeoutResult({ findings: found, timedOutAtMs: T0 + timeoutMs, timeoutMs });
    expect(result).toEqual({
      status: 'timeout',
      partial: true,
      findings: ['f1', 'f2', 'f3'],
      search_exhausted: false,
      timed_out_at: '2026-01-16T14:30:00Z',
      timeout_duration_seconds: 60,
    });
  });

  it('2. a retry with an extended timeout succeeds (×2, then ×3)', () => {
    const policy = compileRetryPolicy({ mode: 'codebase' });
    const first = policy.nextStep({ attempt: 1, error: timeout });
    expect(first).toEqual({ kind: 'retry', attempt: 2, waitMs: 5_000, timeoutMs: 120_000 });
    const second = policy.nextStep({ attempt: 2, error: timeout });
    expect(second).toEqual({ kind: 'retry', attempt: 3, waitMs: 15_000, timeoutMs: 180_000 });
    // Attempt 3 finishes inside its 180 s: the step completed with two retries on record.
    const state = trackTimeouts([
      {
        mode: 'codebase',
        finalStatus: 'completed',
        attempts: [
          { timeoutMs: 60_000, timedOut: true },
          { timeoutMs: 120_000, timedOut: true },
          { timeoutMs: 180_000, timedOut: false },
        ],
      },
    ]);
    expect(state.overall_status).toBe('complete');
    expect(state.timeout_details).toEqual([
      { mode: 'codebase', timeout_at: 60, retries: 2, final_status: 'completed' },
    ]);
  });

  it('3. all retries fail and the escalation message is shown', () => {
    const policy = compileRetryPolicy({ mode: 'external' });
    const failure = new BatonError('TASK_FAILED', 'search API error');
    const ranForMs = [100_000, 110_000, 130_000]; // each attempt fails before its timeout
    let attempt = 1;
    let totalMs = ranForMs[0] as number;
    for (;;) {
      const step = policy.nextStep({ attempt, error: failure });
      if (step.kind !== 'retry') {
        expect(step).toEqual({ kind: 'escalate', reason: 'retries_exhausted', menu: 'exhausted' });
        break;
      }
      attempt = step.attempt;
      totalMs += step.waitMs + (ranForMs[attempt - 1] as number);
    }
    const request = buildDecisionRequest({
      menu: 'exhausted',
      attempts: attempt,
      timeoutMs: policy.attemptTimeoutMs(attempt),
      totalMs,
      findings: 0,
      mode: policy.mode,
      modeLabel: policy.modeLabel,
      modeIds: policy.modeIds,
    });
    expect(request.message).toBe(
      'Research agent failed after 3 attempts.\n' +
        'Mode: External | Total time spent: 6 minutes\n\n' +
        'Options:\n' +
        '[Continue without external research]\n' +
        '[Manual research input]\n' +
        '[Abandon planning session]',
    );
  });

  it('4. fast mode reduces the timeouts appropriately', () => {
    for (const mode of ['codebase', 'docs', 'external', 'dual']) {
      const normal = compileRetryPolicy({ mode });
      const fast = compileRetryPolicy({ mode }, { fast: true });
      expect(fast.attemptTimeoutMs(1)).toBe(normal.attemptTimeoutMs(1) / 2);
      expect(fast.maxAttempts).toBe(2);
      expect(fast.backoffMs(1)).toBe(2_000);
    }
    expect(compileRetryPolicy({ mode: 'dual' }, { fast: true }).attemptTimeoutMs(1)).toBe(90_000);
  });

  it('5. partial results are correctly marked in state', () => {
    const partialStep: StepOutcome = {
      mode: 'external',
      finalStatus: resolveFinalStatus(),
      attempts: [
        { timeoutMs: 120_000, timedOut: true },
        { timeoutMs: 240_000, timedOut: true },
        { timeoutMs: 360_000, timedOut: true },
      ],
    };
    const done: StepOutcome = {
      mode: 'codebase',
      finalStatus: 'completed',
      attempts: [{ timeoutMs: 60_000, timedOut: false }],
    };
    expect(trackTimeouts([done, { ...done, mode: 'docs' }, partialStep])).toEqual({
      agents_spawned: 3,
      agents_completed: 2,
      agents_timed_out: 1,
      timeout_details: [{ mode: 'external', timeout_at: 120, retries: 2, final_status: 'partial' }],
      overall_status: 'partial',
    });

    function resolveFinalStatus() {
      const request = buildDecisionRequest({
        menu: 'exhausted',
        attempts: 3,
        timeoutMs: 360_000,
        totalMs: 740_000,
        findings: 3,
      });
      const outcome = resolveDecision(request, decideByPolicy(request));
      if (outcome.action !== 'finish') throw new Error(`expected finish, got ${outcome.action}`);
      return outcome.finalStatus;
    }
  });

  it('6. the user can continue with incomplete research', () => {
    const fast = compileRetryPolicy({ mode: 'codebase' }, { fast: true });
    const findings = ['a', 'b', 'c'];
    const step = fast.nextStep({ attempt: 1, error: timeout, partial: { findings } });
    expect(step).toEqual({ kind: 'escalate', reason: 'partial_accepted', menu: 'timeout' });
    const request = buildDecisionRequest({
      menu: 'timeout',
      attempts: 1,
      timeoutMs: fast.attemptTimeoutMs(1),
      totalMs: fast.attemptTimeoutMs(1),
      findings: findings.length,
      expectedFindings: { min: 8, max: 12 },
    });
    expect(request.message).toContain('Research agent timed out after 30 seconds.');
    expect(resolveDecision(request, { choice: 'continue_partial' })).toEqual({
      action: 'finish',
      finalStatus: 'partial',
      researchComplete: false,
      usePartial: true,
    });
  });
});
