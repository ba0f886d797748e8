import { describe, expect, it } from 'vitest';
import { assertJsonDepth, MAX_JSON_DEPTH } from './json-depth.ts';

function nested(depth: number, array = false): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

describe('assertJsonDepth', () => {
  it('accepts values up to the limit and refuses deeper ones, naming the field', () => {
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH), 'input')).not.toThrow();
    expect(() => assertJsonDepth(nested(MAX_JSON_DEPTH + 1), 'input')).toThrow(
      `input must be nested at most ${MAX_JSON_DEPTH} levels deep`,
    );
    expect(() => assertJsonDepth(nested(100_000, true), 'answer.input')).toThrow(
      /^answer\.input must be nested/,
    );
  });

  it('accepts scalars, wide values and shared sub-objects', () => {
    for (const v of [null, 1, 'x', true, undefined]) expect(() => assertJsonDepth(v, 'v')).not.toThrow();
    const shared = { x: 1 };
    expect(() => assertJsonDepth({ a: Array.from({ length: 10_000 }, () => shared) }, 'v')).not.toThrow();
    // Each level holds the next one twice: 2^40 paths, walked once per level.
    let dag: unknown = 1;
    for (let i = 0; i < 40; i++) dag = [dag, dag];
    expect(() => assertJsonDepth(dag, 'v')).not.toThrow();
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    expect(() => assertJsonDepth(cycle, 'v')).toThrow(/^v must be nested at most/);
  });
});
