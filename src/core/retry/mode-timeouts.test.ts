import { describe, expect, it } from 'vitest';
import { modeTimeoutMs, RESEARCH_MODES, resolveTimeouts } from './mode-timeouts.ts';

describe('per-mode timeouts', () => {
  it('has the protocol table: codebase 60 s, docs 90 s, external 120 s, dual 180 s', () => {
    const table = resolveTimeouts();
    expect(
      Object.fromEntries(Object.entries(table.modes).map(([id, m]) => [id, m.timeoutMs / 1000])),
    ).toEqual({
      codebase: 60,
      docs: 90,
      external: 120,
      dual: 180,
    });
    expect(table.agentTimeoutMs).toBe(2_880_000);
  });

  it('halves every mode timeout in fast mode and leaves the per-agent timeout', () => {
    const normal = resolveTimeouts();
    const fast = resolveTimeouts({}, true);
    for (const id of Object.keys(RESEARCH_MODES))
      expect(modeTimeoutMs(fast, id)).toBe(modeTimeoutMs(normal, id) / 2);
    expect(modeTimeoutMs(fast, 'external')).toBe(60_000);
    expect(fast.agentTimeoutMs).toBe(normal.agentTimeoutMs);
  });

  it('takes extra modes and overrides, labelled', () => {
    const table = resolveTimeouts(
      { modes: { web: { timeoutMs: 40_000, label: 'Web' }, docs: { timeoutMs: 100_000 } } },
      true,
    );
    expect(table.modes.web).toEqual({ label: 'Web', timeoutMs: 20_000 });
    expect(table.modes.docs).toEqual({ label: 'Docs', timeoutMs: 50_000 });
  });

  it('names the field for an unknown mode or a bad timeout', () => {
    expect(() => modeTimeoutMs(resolveTimeouts(), 'web', 'task.mode')).toThrow(
      'task.mode must be one of "codebase", "docs", "external", "dual", got "web"',
    );
    expect(() => resolveTimeouts({ modes: { web: { timeoutMs: -5 } } })).toThrow(
      'timeouts.modes.web.timeoutMs must be a number of milliseconds > 0, got -5',
    );
    expect(() => resolveTimeouts({ fastTimeoutFactor: 0 })).toThrow(
      'timeouts.fastTimeoutFactor must be a number > 0 and ≤ 1, got 0',
    );
  });
});
