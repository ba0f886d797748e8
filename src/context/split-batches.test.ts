import { beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { type BatchConfig, compileBatchConfig, DEFAULT_BATCH_CONFIG, seededShuffle } from './batch-config.ts';
import { loadEncoding, type TextTokenCounter } from './encodings.ts';
import { splitIntoBatches, splitTextByTokens } from './split-batches.ts';

let count: TextTokenCounter;
beforeAll(async () => {
  count = await loadEncoding('o200k_base');
});
const ctx = () => ({
  countText: count,
  countValue: (v: unknown) => (typeof v === 'string' ? count(v) : count(JSON.stringify(v))),
  priorityOf: (el: unknown) => (el as { priority?: 1 | 2 | 3 | 4 }).priority,
});
const config = (over: Partial<BatchConfig>): BatchConfig => ({ ...DEFAULT_BATCH_CONFIG, ...over });

const text = Array.from({ length: 300 }, (_, i) =>
  i % 2
    ? `第${i}句话说明注意力机制的并行计算能力。`
    : `Sentence ${i} explains how attention trains in parallel.`,
).join(' ');
const items = Array.from({ length: 200 }, (_, i) => ({
  id: i,
  priority: ((i % 4) + 1) as 1 | 2 | 3 | 4,
  body: `item ${i} `.repeat(8),
}));

describe('splitting into batches (§6.2)', () => {
  it('splits text between sentences, every batch within size, with the overlap repeated', () => {
    const chunks = splitTextByTokens(text, 400, 50, count);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(count(c)).toBeLessThanOrEqual(400);
    for (let i = 1; i < chunks.length; i++) {
      // The overlap: from where chunk i's first sentence sits in chunk i−1, to the end of chunk i−1.
      const first = chunks[i]!.split(/(?<=[.。])\s*/)[0]!;
      const overlap = chunks[i - 1]!.slice(chunks[i - 1]!.lastIndexOf(first));
      expect(chunks[i - 1]!.includes(first)).toBe(true);
      expect(chunks[i]!.startsWith(overlap)).toBe(true);
      expect(count(overlap)).toBeLessThanOrEqual(50);
    }
    const all = chunks.join(' ');
    for (const probe of ['Sentence 0 explains', '第299句话', 'Sentence 150 explains'])
      expect(all).toContain(probe);
  });

  it('splits a sentence longer than a batch between words', () => {
    const chunks = splitTextByTokens('attention '.repeat(500), 100, 0, count);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    for (const c of chunks) expect(count(c)).toBeLessThanOrEqual(100);
    const words = chunks.join(' ').split(/\s+/).filter(Boolean);
    expect(words).toEqual(Array(500).fill('attention'));
  });

  it('splits arrays between elements, each element exactly once, in order', () => {
    const split = splitIntoBatches(items, config({ batch_size_tokens: 800 }), ctx());
    expect(split.omitted_batches).toBe(0);
    const seen = split.batches.flatMap((b) => (b.data as Array<{ id: number }>).map((x) => x.id));
    expect(seen).toEqual(items.map((x) => x.id));
    for (const b of split.batches) {
      expect(b.tokens).toBeLessThanOrEqual(800);
      expect(b.item_ranges).toHaveLength(1);
      const [start, end] = b.item_ranges![0]!;
      expect((b.data as unknown[]).length).toBe(end - start);
    }
  });

  it('drops batches past max_batches and counts them', () => {
    const split = splitIntoBatches(items, config({ batch_size_tokens: 800, max_batches: 2 }), ctx());
    expect(split.batches).toHaveLength(2);
    expect(split.total_batches).toBeGreaterThan(2);
    expect(split.omitted_batches).toBe(split.total_batches - 2);
  });

  it('packs the most important elements first with importance priority', () => {
    const split = splitIntoBatches(
      items,
      config({ batch_size_tokens: 800, batch_priority: 'importance' }),
      ctx(),
    );
    const first = split.batches[0]!.data as Array<{ priority: number }>;
    expect(first.every((x) => x.priority === 1)).toBe(true);
  });

  it('shuffles reproducibly with a seed under random priority', () => {
    const a = splitIntoBatches(
      items,
      config({ batch_size_tokens: 800, batch_priority: 'random', seed: 7 }),
      ctx(),
    );
    const b = splitIntoBatches(
      items,
      config({ batch_size_tokens: 800, batch_priority: 'random', seed: 7 }),
      ctx(),
    );
    const c = splitIntoBatches(
      items,
      config({ batch_size_tokens: 800, batch_priority: 'random', seed: 8 }),
      ctx(),
    );
    expect(a.batches.map((x) => x.item_ranges)).toEqual(b.batches.map((x) => x.item_ranges));
    expect(a.batches.map((x) => x.item_ranges)).not.toEqual(c.batches.map((x) => x.item_ranges));
    expect(seededShuffle([1, 2, 3, 4, 5, 6], 3).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('splits an object between its fields and its arrays’ elements, and flags an oversize element', () => {
    const value = { title: 'Attention', atoms: items.slice(0, 40), huge: { blob: 'x '.repeat(3000) } };
    const split = splitIntoBatches(value, config({ batch_size_tokens: 600 }), ctx());
    const ids = split.batches.flatMap((b) =>
      ((b.data as { atoms?: Array<{ id: number }> }).atoms ?? []).map((x) => x.id),
    );
    expect(ids).toEqual(items.slice(0, 40).map((x) => x.id));
    expect(split.batches[0]!.data).toMatchObject({ title: 'Attention' });
    const oversize = split.batches.filter((b) => b.oversize);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]!.field_ranges).toEqual({ huge: [] });
  });

  it.each([
    [{ batch_size_tokens: 0 }, 'batch_config.batch_size_tokens'],
    [{ overlap_tokens: 30_000 }, 'batch_config.overlap_tokens'],
    [{ aggregation_strategy: 'average' }, 'batch_config.aggregation_strategy'],
    [{ batch_priority: 'newest' }, 'batch_config.batch_priority'],
    [{ max_batch: 3 }, 'batch_config.max_batch'],
  ])('rejects batch_config %j naming %s', (value, field) => {
    let caught: unknown;
    try {
      compileBatchConfig(value);
    } catch (err) {
      caught = err;
    }
    expect(isBatonError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { field: string }).field).toBe(field);
  });
});
