import { describe, expect, it } from 'vitest';
import type { PriorityLevel } from './priority.ts';
import { type TrimItem, trimByPriority } from './trim-by-priority.ts';

const item = (name: string, priority: PriorityLevel, tokens: number, reducible = true): TrimItem => ({
  name,
  priority,
  tokens,
  reducible,
});

/** Hooks that shrink to exactly the target and remember what they were asked. */
function exactHooks() {
  const calls: Array<[string, string, number]> = [];
  return {
    calls,
    hooks: {
      compress: async (name: string, target: number) => {
        calls.push(['compress', name, target]);
        return target;
      },
      summarize: async (name: string, target: number) => {
        calls.push(['summarize', name, target]);
        return target;
      },
    },
  };
}

describe('priority trimming (§6.3)', () => {
  it('keeps level 3 only strictly below 0.9·L and level 4 only strictly below 0.95·L', async () => {
    const L = 1000;
    const { hooks } = exactHooks();
    const at = await trimByPriority(
      [item('base', 1, 500), item('supp', 3, 400), item('opt', 4, 49)],
      L,
      hooks,
    );
    expect(at.decisions.map((d) => [d.name, d.outcome])).toEqual([
      ['base', 'kept'],
      ['supp', 'skipped'],
      ['opt', 'kept'],
    ]);
    const below = await trimByPriority(
      [item('base', 1, 500), item('supp', 3, 399), item('opt', 4, 51)],
      L,
      hooks,
    );
    expect(below.decisions.map((d) => d.outcome)).toEqual(['kept', 'kept', 'skipped']);
    expect(below.finalTokens).toBe(899);
  });

  it('summarizes level 2 at 0.8·L to the ratio, capped by the room below 0.8·L', async () => {
    const { calls, hooks } = exactHooks();
    const r = await trimByPriority([item('a', 1, 700), item('b', 2, 100), item('c', 2, 500)], 1000, hooks, {
      summaryRatio: 0.3,
    });
    expect(calls).toEqual([
      ['summarize', 'b', 30],
      ['summarize', 'c', 70],
    ]);
    expect(r.decisions.map((d) => d.outcome)).toEqual(['kept', 'summarized', 'summarized']);
    expect(r.finalTokens).toBe(800);
  });

  it('uses the room below L for a level-2 summary when under 0.8·L there is almost none', async () => {
    const { calls, hooks } = exactHooks();
    await trimByPriority([item('a', 1, 790), item('b', 2, 500)], 1000, hooks, {
      summaryRatio: 0.3,
      minSummaryTokens: 64,
    });
    expect(calls).toEqual([['summarize', 'b', 150]]);
  });

  it('sorts by level, stable within a level, whatever the input order', async () => {
    const { hooks } = exactHooks();
    const r = await trimByPriority(
      [item('d', 4, 1), item('b1', 2, 1), item('a', 1, 1), item('b2', 2, 1)],
      1000,
      hooks,
    );
    expect(r.decisions.map((d) => d.name)).toEqual(['a', 'b1', 'b2', 'd']);
  });

  it('compresses level 1 past L, reserving room for the level-1 items that follow it', async () => {
    const { calls, hooks } = exactHooks();
    const r = await trimByPriority(
      [item('data', 1, 900), item('more', 1, 100), item('instructions', 1, 200, false)],
      1000,
      hooks,
    );
    // Room after the instructions: 800, shared 9:1 between `data` and `more`.
    expect(calls).toEqual([
      ['compress', 'data', 720],
      ['compress', 'more', 80],
    ]);
    expect(r.finalTokens).toBe(1000);
  });

  it('shares the room in proportion when the level-1 items after it cannot all fit', async () => {
    const { calls, hooks } = exactHooks();
    await trimByPriority([item('x', 1, 600), item('y', 1, 600)], 600, hooks);
    expect(calls).toEqual([
      ['compress', 'x', 300],
      ['compress', 'y', 300],
    ]);
  });

  it('leaves level 1 untouched when all of it fits', async () => {
    const { calls, hooks } = exactHooks();
    const r = await trimByPriority([item('x', 1, 500), item('y', 1, 500, false)], 1000, hooks);
    expect(calls).toEqual([]);
    expect(r.finalTokens).toBe(1000);
  });

  it('keeps what cannot shrink and leaves the over-limit total to the report', async () => {
    const { calls, hooks } = exactHooks();
    const r = await trimByPriority(
      [item('instructions', 1, 1200, false), item('b', 2, 10, false)],
      1000,
      hooks,
    );
    expect(calls).toEqual([]);
    expect(r.finalTokens).toBe(1210);
  });
});
