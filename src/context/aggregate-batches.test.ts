import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { aggregateBatchResults, canonicalJson } from './aggregate-batches.ts';

describe('aggregating batch results', () => {
  it('merge concatenates arrays without duplicates and deep-merges objects', () => {
    const a = {
      atoms: [{ atom_id: 'a1', v: 1 }, { atom_id: 'a2' }],
      stats: { n: 2, tags: ['x'] },
      title: 'first',
    };
    const b = {
      atoms: [{ atom_id: 'a2' }, { atom_id: 'a3' }],
      stats: { m: 1, tags: ['x', 'y'] },
      title: 'second',
    };
    expect(aggregateBatchResults([a, null, b], { strategy: 'merge' })).toEqual({
      strategy: 'merge',
      batches: 2,
      value: {
        atoms: [{ atom_id: 'a1', v: 1 }, { atom_id: 'a2' }, { atom_id: 'a3' }],
        stats: { n: 2, m: 1, tags: ['x', 'y'] },
        title: 'second',
      },
    });
  });

  it('merge dedupes array elements by an identity field when given one', () => {
    const r = aggregateBatchResults(
      [[{ atom_id: 'a1', v: 1 }], [{ atom_id: 'a1', v: 2 }, { atom_id: 'a2' }]],
      { strategy: 'merge', dedupeBy: 'atom_id' },
    );
    expect(r.value).toEqual([{ atom_id: 'a1', v: 1 }, { atom_id: 'a2' }]);
  });

  it('merge joins distinct strings', () => {
    expect(aggregateBatchResults(['a', 'b', 'a'], { strategy: 'merge' }).value).toBe('a\n\nb');
  });

  it('vote returns the majority, comparing objects whatever their key order', () => {
    const r = aggregateBatchResults(
      [{ label: 'valid', ok: true }, { ok: true, label: 'valid' }, { label: 'invalid' }],
      {
        strategy: 'vote',
      },
    );
    expect(r.value).toEqual({ label: 'valid', ok: true });
    expect(r.votes).toEqual({ winner: 2, total: 3, tied: false });
  });

  it('vote breaks a tie in favour of the value seen first', () => {
    const r = aggregateBatchResults(['no', 'yes', 'yes', 'no'], { strategy: 'vote' });
    expect(r.value).toBe('no');
    expect(r.votes?.tied).toBe(true);
  });

  it('latest returns the last batch that produced something', () => {
    expect(aggregateBatchResults([1, 2, undefined], { strategy: 'latest' }).value).toBe(2);
    expect(aggregateBatchResults([], { strategy: 'latest' }).value).toBeNull();
  });

  it('weighted averages numbers by the results’ confidence fields, field by field', () => {
    const r = aggregateBatchResults(
      [
        { score: 0.9, label: 'valid', confidence: 0.9 },
        { score: 0.1, label: 'invalid', confidence: 0.1 },
      ],
      { strategy: 'weighted' },
    );
    expect(r.value).toMatchObject({ label: 'valid' });
    expect((r.value as { score: number }).score).toBeCloseTo(0.82, 10);
  });

  it('weighted uses given weights and orders array elements by their support', () => {
    expect(aggregateBatchResults([10, 20], { strategy: 'weighted', weights: [3, 1] }).value).toBe(12.5);
    const r = aggregateBatchResults([['a', 'b'], ['b', 'c'], ['c']], {
      strategy: 'weighted',
      weights: [1, 2, 2],
    });
    expect(r.value).toEqual(['c', 'b', 'a']);
    const vote = aggregateBatchResults(['x', 'y', 'y'], { strategy: 'weighted', weights: [5, 1, 1] });
    expect(vote.value).toBe('x');
    expect(vote.votes).toEqual({ winner: 5, total: 7, tied: false });
  });

  it('rejects weights that do not match the results or are negative', () => {
    let caught: unknown;
    try {
      aggregateBatchResults([1, 2], { strategy: 'weighted', weights: [1] });
    } catch (err) {
      caught = err;
    }
    expect(isBatonError(caught, 'INVALID_INPUT')).toBe(true);
    expect(() => aggregateBatchResults([1, 2], { strategy: 'weighted', weights: [1, -1] })).toThrow(
      /weights\[1\]/,
    );
  });

  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });
});
