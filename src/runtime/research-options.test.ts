/**
 * The protocols' research preset: with it, a task gets the protocols' numbers exactly (research
 * modes, per-agent timeout, agent checkpoint intervals, degradation table); without it, the general
 * defaults whatever the task is called. Pure: the task definitions' compiled policies.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_PROFILES, DEFAULT_DEGRADATION_TABLE } from '../core/index.ts';
import { defineTask } from './define-task.ts';

const run = () => 1;

describe('the research preset', () => {
  it("gives each research mode protocol 001's timeouts, retries ×2 and ×3, under the 2880 s per-agent cap", () => {
    const expected = { codebase: 60_000, docs: 90_000, external: 120_000, dual: 180_000 };
    for (const [mode, base] of Object.entries(expected)) {
      const policy = defineTask({ name: `r-${mode}`, research: { mode }, run }).policy({});
      expect(
        [1, 2, 3].map((n) => policy.attemptTimeoutMs(n)),
        mode,
      ).toEqual([base, base * 2, base * 3]);
      expect(policy.agentTimeoutMs).toBe(2_880_000);
    }
  });

  it('takes the agent from the task name only with the preset, and the profile numbers exactly', () => {
    for (const [name, profile] of Object.entries(AGENT_PROFILES)) {
      expect(defineTask({ name, run }).agent, name).toBeUndefined();
      expect(defineTask({ name, research: {}, run }).agent, name).toBe(name);
      expect(profile.timeoutMs).toBe(2_880_000);
    }
    expect(AGENT_PROFILES['academic-researcher']?.every).toBe(3);
    expect(AGENT_PROFILES['github-watcher']?.every).toBe(2);
    expect(AGENT_PROFILES['community-listener']?.every).toBe(5);
  });

  it("keeps protocol 001's degradation table unless the preset changes it, following the task's thresholds", () => {
    expect(defineTask({ name: 'plain', research: {}, run }).degradation).toBeUndefined();
    const changed = defineTask({
      name: 'changed',
      time: { thresholds: { criticalSeconds: 30 } },
      research: {
        degradation: {
          rules: { search: { critical: { action: 'skip', reason: 'no time', alternative: 'cached hits' } } },
        },
      },
      run,
    }).degradation;
    expect(changed?.thresholds).toEqual({ ...DEFAULT_DEGRADATION_TABLE.thresholds, criticalSeconds: 30 });
    expect(changed?.rules.search?.critical?.action).toBe('skip');
  });

  it('moves the per-agent cap and extra modes into the preset', () => {
    const policy = defineTask({
      name: 'custom',
      research: { mode: 'quick', modes: { quick: { timeoutMs: 5_000 } }, agentTimeout: '12s' },
      run,
    }).policy({});
    expect([1, 2, 3].map((n) => policy.attemptTimeoutMs(n))).toEqual([5_000, 10_000, 12_000]);
  });
});

describe('a general task (no preset)', () => {
  it('has few options: the research vocabulary is not among them', () => {
    for (const key of ['mode', 'agent'])
      expect(() => defineTask({ name: 'g', [key]: 'docs', run } as never)).toThrow(/is not an option/);
    expect(() => defineTask({ name: 'g', retry: { modes: {} }, run } as never)).toThrow(
      /task "g"\.retry\.modes is not an option/,
    );
  });
});
