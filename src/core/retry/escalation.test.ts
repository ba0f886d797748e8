import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ESCALATION_POLICY,
  decideByPolicy,
  defineEscalationPolicy,
  resolveDecision,
  validateDecision,
} from './decision.ts';
import { buildDecisionRequest, ESCALATION_CHOICES, EscalationChoiceIds } from './escalation-request.ts';
import { compileRetryPolicy } from './retry-policy.ts';

const policy = compileRetryPolicy({ mode: 'codebase' });
const timedOut = buildDecisionRequest({
  menu: 'timeout',
  attempts: 1,
  timeoutMs: 60_000,
  totalMs: 60_000,
  findings: 3,
  expectedFindings: { min: 8, max: 12 },
  mode: policy.mode,
  modeLabel: policy.modeLabel,
  modeIds: policy.modeIds,
});

describe('the timeout menu', () => {
  it('reads as the protocol shows it', () => {
    expect(timedOut.message).toBe(
      'Research agent timed out after 60 seconds.\n' +
        'Partial results captured: 3 findings (normally expect 8-12)\n\n' +
        '[Retry with extended timeout] [Continue with partial results] [Skip research] [Different mode]',
    );
    expect(timedOut.choices.map((c) => c.id)).toEqual([
      'retry_extended',
      'continue_partial',
      'skip',
      'different_mode',
    ]);
    expect(timedOut.otherModes).toEqual(['docs', 'external', 'dual']);
  });

  it('takes the task’s own nouns, and leaves out what does not apply', () => {
    const request = buildDecisionRequest({
      menu: 'timeout',
      attempts: 1,
      timeoutMs: 1_000,
      totalMs: 1_000,
      findings: 1,
      taskName: 'fetch-papers',
      wording: { subject: 'Task "fetch-papers"', work: 'paper search' },
    });
    expect(request.message).toBe(
      'Task "fetch-papers" timed out after 1 second.\nPartial results captured: 1 finding\n\n' +
        '[Retry with extended timeout] [Continue with partial results] [Skip paper search]',
    );
    expect(request.taskName).toBe('fetch-papers');
  });
});

describe('the exhausted menu', () => {
  it('offers to continue with the partial results first when there are some', () => {
    const request = buildDecisionRequest({
      menu: 'exhausted',
      attempts: 3,
      timeoutMs: 1,
      totalMs: 90_000,
      findings: 2,
    });
    expect(request.choices.map((c) => c.id)).toEqual(['continue_partial', 'skip', 'manual_input', 'abandon']);
    expect(request.message).toBe(
      'Research agent failed after 3 attempts.\nTotal time spent: 2 minutes\n\nOptions:\n' +
        '[Continue with partial results]\n[Continue without research]\n[Manual research input]\n[Abandon planning session]',
    );
  });

  it('does not repeat the work noun after a mode label that has it', () => {
    const request = buildDecisionRequest({
      menu: 'exhausted',
      attempts: 2,
      timeoutMs: 1,
      totalMs: 45_000,
      findings: 0,
      mode: 'dual',
      modeLabel: 'Dual Research',
    });
    expect(request.message).toBe(
      'Research agent failed after 2 attempts.\nMode: Dual Research | Total time spent: 45 seconds\n\nOptions:\n' +
        '[Continue without dual research]\n[Manual research input]\n[Abandon planning session]',
    );
  });

  it('names the field on bad input', () => {
    const base = { menu: 'exhausted' as const, attempts: 1, timeoutMs: 1, totalMs: 1, findings: 0 };
    expect(() => buildDecisionRequest({ ...base, findings: -1 })).toThrow(
      'findings must be an integer ≥ 0, got -1',
    );
    expect(() => buildDecisionRequest({ ...base, expectedFindings: { min: 8, max: 4 } })).toThrow(
      'expectedFindings.max must be an integer ≥ expectedFindings.min (8), got 4',
    );
  });
});

describe('validateDecision', () => {
  it('accepts each offered choice, with a mode for a different mode', () => {
    expect(validateDecision(timedOut, { choice: 'skip', note: 'ignored' })).toEqual({ choice: 'skip' });
    expect(validateDecision(timedOut, { choice: 'different_mode', mode: 'docs' })).toEqual({
      choice: 'different_mode',
      mode: 'docs',
    });
  });

  it('names the field when the answer is wrong', () => {
    expect(() => validateDecision(timedOut, 'skip')).toThrow(
      'answer must be an object like { "choice": "skip" }, got "skip"',
    );
    expect(() => validateDecision(timedOut, { choice: 'abandon' })).toThrow(
      'answer.choice must be one of "retry_extended", "continue_partial", "skip", "different_mode", got "abandon"',
    );
    expect(() => validateDecision(timedOut, { choice: 'different_mode' })).toThrow(
      'answer.mode must be one of "docs", "external", "dual"',
    );
    expect(() => validateDecision(timedOut, { choice: 'different_mode', mode: 'codebase' })).toThrow(
      /^answer\.mode must be one of/,
    );
    const exhausted = buildDecisionRequest({
      menu: 'exhausted',
      attempts: 3,
      timeoutMs: 1,
      totalMs: 1,
      findings: 0,
    });
    expect(() => validateDecision(exhausted, { choice: 'manual_input' })).toThrow(
      /^answer\.input must be the research to use/,
    );
    expect(() => validateDecision(exhausted, {})).toThrow(
      expect.objectContaining({ code: 'DECISION_INVALID', field: 'answer.choice' }),
    );
  });
});

describe('resolveDecision', () => {
  it('tells the engine what each choice means', () => {
    expect(resolveDecision(timedOut, { choice: 'retry_extended' })).toEqual({
      action: 'retry',
      timeoutMs: 120_000,
    });
    expect(resolveDecision(timedOut, { choice: 'continue_partial' })).toEqual({
      action: 'finish',
      finalStatus: 'partial',
      researchComplete: false,
      usePartial: true,
    });
    expect(resolveDecision(timedOut, { choice: 'skip' })).toMatchObject({
      finalStatus: 'skipped',
      researchComplete: false,
    });
    expect(resolveDecision(timedOut, { choice: 'different_mode', mode: 'external' })).toEqual({
      action: 'restart',
      mode: 'external',
    });
    const exhausted = buildDecisionRequest({
      menu: 'exhausted',
      attempts: 3,
      timeoutMs: 1,
      totalMs: 1,
      findings: 0,
    });
    expect(resolveDecision(exhausted, { choice: 'manual_input', input: ['my notes'] })).toMatchObject({
      action: 'finish',
      finalStatus: 'completed',
      input: ['my notes'],
    });
    expect(resolveDecision(exhausted, { choice: 'abandon' })).toEqual({ action: 'abandon' });
  });

  it('describes every choice id', () => {
    for (const id of EscalationChoiceIds) expect(ESCALATION_CHOICES[id].effect.length).toBeGreaterThan(0);
  });
});

describe('decideByPolicy', () => {
  const exhausted = (findings: number) =>
    buildDecisionRequest({ menu: 'exhausted', attempts: 3, timeoutMs: 1, totalMs: 1, findings });

  it('continues with partial results when any were found, else skips', () => {
    expect(decideByPolicy(timedOut)).toEqual({ choice: 'continue_partial' });
    expect(decideByPolicy(exhausted(2))).toEqual({ choice: 'continue_partial' });
    expect(decideByPolicy(exhausted(0))).toEqual({ choice: 'skip' });
    for (const request of [timedOut, exhausted(0), exhausted(4)])
      expect(() => validateDecision(request, decideByPolicy(request))).not.toThrow();
  });

  it('follows a stricter policy', () => {
    const strict = defineEscalationPolicy({ minFindings: 5, otherwise: ['abandon'] });
    expect(decideByPolicy(exhausted(4), strict)).toEqual({ choice: 'abandon' });
    expect(() => decideByPolicy(timedOut, strict)).toThrow(/escalation policy cannot answer/);
    expect(DEFAULT_ESCALATION_POLICY.minFindings).toBe(1);
  });

  it('rejects a bad policy, naming the field', () => {
    expect(() => defineEscalationPolicy({ otherwise: ['different_mode' as never] })).toThrow(
      'escalation.otherwise[0] must be one of "skip", "abandon", "retry_extended", got "different_mode"',
    );
    expect(() => defineEscalationPolicy({ minFindings: -1 })).toThrow(
      'escalation.minFindings must be an integer ≥ 0, got -1',
    );
  });
});
