import { describe, expect, it } from 'vitest';
import { createCheckpointState } from './checkpoint-state.ts';
import { planResume } from './plan-resume.ts';

const saved = createCheckpointState({
  conversationHistory: [{ role: 'user', content: 'go' }],
  turnCount: 8,
  toolCallCount: 12,
  contextSummary: { systemId: 'sys_123' },
  elapsedMs: 60_123,
  now: Date.UTC(2026, 0, 1),
});

describe('planResume', () => {
  it('continues from the turn after the checkpoint with the saved counters', () => {
    const plan = planResume(saved, { timeoutMs: 60_000, now: 1_000 });
    expect(plan).toMatchObject({
      wasResumed: true,
      nextTurn: 9,
      turnCount: 8,
      toolCallCount: 12,
      priorElapsedMs: 60_123,
      contextSummary: { systemId: 'sys_123' },
    });
    expect(plan.conversationHistory).toEqual(saved.conversationHistory);
    expect(plan.conversationHistory).not.toBe(saved.conversationHistory);
  });

  it('gives this invocation its own budget, less the time already spent loading', () => {
    expect(planResume(saved, { timeoutMs: 60_000, now: 5_000 })).toMatchObject({
      remainingMs: 60_000,
      deadline: 65_000,
    });
    expect(planResume(saved, { timeoutMs: 60_000, now: 5_000, invocationStartedAt: 4_600 })).toMatchObject({
      remainingMs: 59_600,
      deadline: 64_600,
    });
    expect(planResume(saved, { timeoutMs: 1_000, now: 5_000, invocationStartedAt: 1_000 }).remainingMs).toBe(
      0,
    );
  });

  it('rejects options that cannot be a budget, naming them', () => {
    expect(() => planResume(saved, { timeoutMs: 0, now: 0 })).toThrow(/timeoutMs/);
    expect(() => planResume(saved, { timeoutMs: 1, now: Number.NaN })).toThrow(/now/);
    expect(() => planResume(saved, { timeoutMs: 1, now: 0, invocationStartedAt: 5 })).toThrow(
      /invocationStartedAt/,
    );
  });
});
