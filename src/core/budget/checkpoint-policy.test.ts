import { describe, expect, it } from 'vitest';
import { AGENT_PROFILES, createCheckpointPolicy } from './checkpoint-policy.ts';

describe('checkpoint moments', () => {
  it('checkpoints after every N items, N from the protocol table per agent', () => {
    const expected = { 'academic-researcher': 3, 'github-watcher': 2, 'community-listener': 5 };
    for (const [agent, every] of Object.entries(expected)) {
      const policy = createCheckpointPolicy({ agent });
      const due = Array.from({ length: 16 }, (_, count) => count).filter((count) => policy.afterItems(count));
      const multiples = Array.from({ length: Math.floor(15 / every) }, (_, i) => (i + 1) * every);
      expect(due).toEqual(multiples); // e.g. 3, 6, 9, 12, 15 — never 0
      expect(policy.agentTimeoutMs).toBe(2_880_000);
    }
  });

  it('does not miss an interval when items arrive in a batch', () => {
    const policy = createCheckpointPolicy({ agent: 'academic-researcher' });
    expect(policy.afterItems(4)).toBe(false); // one at a time, 3 was the checkpoint
    expect(policy.afterItems(4, 2)).toBe(true); // 2 → 4 passed 3
    expect(policy.afterItems(5, 3)).toBe(false);
  });

  it('checkpoints before deep analysis and before every tool call unless turned off', () => {
    const policy = createCheckpointPolicy({ every: 4 });
    expect(policy.beforeDeepAnalysis()).toBe(true);
    expect(policy.beforeToolCall()).toBe(true);
    const quiet = createCheckpointPolicy({ beforeToolCall: false, beforeDeepAnalysis: false });
    expect(quiet.beforeToolCall()).toBe(false);
    expect(quiet.beforeDeepAnalysis()).toBe(false);
  });

  it('checkpoints after a tool call that took the shorter of 60 s and 10 % of the budget', () => {
    const long = createCheckpointPolicy({ budgetMs: 4_500_000 }); // 10 % = 7.5 min → 60 s wins
    expect(long.longToolCallMs).toBe(60_000);
    expect(long.afterToolCall(59_999)).toBe(false);
    expect(long.afterToolCall(60_000)).toBe(true);
    const short = createCheckpointPolicy({ budgetMs: 300_000 }); // 10 % = 30 s
    expect(short.afterToolCall(29_000)).toBe(false);
    expect(short.afterToolCall(31_000)).toBe(true);
    expect(createCheckpointPolicy({ longToolCallMs: 5_000 }).afterToolCall(5_000)).toBe(true);
  });

  it('defaults to every item for a task with no interval, and lets a task set its own', () => {
    expect(createCheckpointPolicy().every).toBe(1);
    expect(createCheckpointPolicy({ agent: 'github-watcher', every: 7 }).every).toBe(7);
    expect(createCheckpointPolicy({ agent: 'github-watcher' }).unit).toBe('repositories');
    expect(
      createCheckpointPolicy({
        agent: 'mine',
        profiles: { mine: { every: 4, unit: 'pages', timeoutMs: 1000 } },
      }),
    ).toMatchObject({ every: 4, unit: 'pages', agentTimeoutMs: 1000 });
  });

  it('rejects bad options with messages that name the field', () => {
    expect(() => createCheckpointPolicy({ every: 0 })).toThrow(
      'checkpoint.every must be an integer ≥ 1, got 0',
    );
    expect(() => createCheckpointPolicy({ agent: 'nobody' })).toThrow(
      `checkpoint.agent must be one of ${Object.keys(AGENT_PROFILES)
        .map((k) => `"${k}"`)
        .join(', ')} (or give checkpoint.every), got "nobody"`,
    );
    expect(() => createCheckpointPolicy({ budgetMs: -1 })).toThrow(
      'checkpoint.budgetMs must be a finite number of milliseconds > 0, got -1',
    );
    expect(() => createCheckpointPolicy().afterItems(2, 3)).toThrow(
      'sinceCount must be an integer ≤ count (2), got 3',
    );
  });
});
