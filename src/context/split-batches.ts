/**
 * Splitting an oversized value into batches (protocol 002 §6.2). Arrays split between elements (an
 * element is never cut; one larger than a batch gets a batch of its own, marked `oversize`); an
 * object splits between its fields and the elements of its array fields; text splits between
 * sentences, or words inside a sentence longer than a batch, and each text batch after the first
 * starts with the previous one's last `overlap_tokens` worth of sentences. `batch_priority` orders
 * elements before packing (chronological = as given, importance = by priority, random = seeded
 * shuffle); batches past `max_batches` are dropped and counted.
 */

import type { BatchConfig } from './batch-config.ts';
import { seededShuffle } from './batch-config.ts';
import type { TextTokenCounter } from './encodings.ts';
import type { PriorityLevel } from './priority.ts';
import { detectLanguage, splitSentences, wordPieces } from './split-text.ts';
import { isPlainObject } from './validate-options.ts';

export interface Batch {
  batch_index: number;
  tokens: number;
  data: unknown;
  /** For an array: the original element indices in this batch, as [start, end) ranges. */
  item_ranges?: Array<[number, number]>;
  /** For an object: per array field, its element ranges; other fields map to []. */
  field_ranges?: Record<string, Array<[number, number]>>;
  /** A single element larger than batch_size_tokens. */
  oversize?: true;
}

export interface BatchSplit {
  batches: Batch[];
  /** Batches the data needed before max_batches applied. */
  total_batches: number;
  omitted_batches: number;
}

export interface SplitContext {
  countValue: (v: unknown) => number;
  countText: TextTokenCounter;
  priorityOf: (element: unknown) => PriorityLevel | undefined;
}

interface Piece {
  text: string;
  /** What goes before this piece when the previous piece of the text precedes it. */
  sep: string;
  tokens: number;
}

function textPieces(text: string, size: number, count: TextTokenCounter): Piece[] {
  const language = detectLanguage(text);
  const out: Piece[] = [];
  let prevBlock = -1;
  for (const s of splitSentences(text, language)) {
    const sep = prevBlock === -1 ? '' : s.block !== prevBlock ? '\n' : language === 'zh' ? '' : ' ';
    prevBlock = s.block;
    const tokens = count(s.text);
    if (tokens <= size) {
      out.push({ text: s.text, sep, tokens });
      continue;
    }
    wordPieces(s.text, language).forEach((w, i) => {
      out.push({ text: w, sep: i === 0 ? sep : '', tokens: count(w) });
    });
  }
  return out;
}

const joinPieces = (pieces: readonly Piece[]) =>
  pieces.map((p, i) => (i === 0 ? p.text : p.sep + p.text)).join('');

/** Splits text into chunks of at most `size` tokens, each starting with ≤ `overlap` tokens of the last. */
export function splitTextByTokens(
  text: string,
  size: number,
  overlap: number,
  count: TextTokenCounter,
): string[] {
  const pieces = textPieces(text, size, count);
  const chunks: string[] = [];
  let carry: Piece[] = [];
  let i = 0;
  while (i < pieces.length) {
    const start = i;
    let chunk = [...carry];
    let estimate = carry.reduce((s, p) => s + p.tokens, 0);
    while (i < pieces.length && estimate + pieces[i]!.tokens <= size) {
      estimate += pieces[i]!.tokens;
      chunk.push(pieces[i++]!);
    }
    if (i === start) {
      // The overlap left no room for the next piece: drop the overlap rather than stall.
      chunk = [pieces[i++]!];
      carry = [];
    }
    while (chunk.length - carry.length > 1 && count(joinPieces(chunk)) > size) {
      chunk.pop();
      i--;
    }
    chunks.push(joinPieces(chunk));
    carry = [];
    let kept = 0;
    for (let j = chunk.length - 1; j > 0; j--) {
      if (kept + chunk[j]!.tokens > overlap) break;
      kept += chunk[j]!.tokens;
      carry.unshift(chunk[j]!);
    }
    if (i >= pieces.length) break;
  }
  return chunks;
}

interface Unit {
  key: string | null;
  index: number;
  value: unknown;
  tokens: number;
  priority: number;
  order: number;
}

function ranges(indices: number[]): Array<[number, number]> {
  const sorted = [...indices].sort((a, b) => a - b);
  const out: Array<[number, number]> = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else out.push([i, i + 1]);
  }
  return out;
}

export function splitIntoBatches(value: unknown, config: BatchConfig, ctx: SplitContext): BatchSplit {
  const size = config.batch_size_tokens;
  if (typeof value === 'string') {
    const chunks = splitTextByTokens(value, size, config.overlap_tokens, ctx.countText);
    const ordered = config.batch_priority === 'random' ? seededShuffle(chunks, config.seed) : chunks;
    return finish(
      ordered.map((data, batch_index) => ({ batch_index, tokens: ctx.countText(data), data })),
      config,
    );
  }
  const units: Unit[] = [];
  const add = (key: string | null, index: number, v: unknown): void => {
    units.push({
      key,
      index,
      value: v,
      tokens: ctx.countValue(v) + 1,
      priority: ctx.priorityOf(v) ?? 2,
      order: units.length,
    });
  };
  if (Array.isArray(value))
    value.forEach((el, i) => {
      add(null, i, el);
    });
  else if (isPlainObject(value))
    for (const [k, v] of Object.entries(value)) {
      if (Array.isArray(v))
        v.forEach((el, i) => {
          add(k, i, el);
        });
      else if (typeof v === 'string' && ctx.countText(v) > size)
        splitTextByTokens(v, size, config.overlap_tokens, ctx.countText).forEach((part, i) => {
          add(k, -1 - i, part);
        });
      else add(k, -1, v);
    }
  else add(null, 0, value);

  const ordered =
    config.batch_priority === 'importance'
      ? [...units].sort((a, b) => a.priority - b.priority || a.order - b.order)
      : config.batch_priority === 'random'
        ? seededShuffle(units, config.seed)
        : units;
  const build = (group: Unit[], batch_index: number): Batch => {
    const inOrder = [...group].sort((a, b) => a.order - b.order);
    let batch: Batch;
    if (Array.isArray(value)) {
      batch = {
        batch_index,
        tokens: 0,
        data: inOrder.map((u) => u.value),
        item_ranges: ranges(inOrder.map((u) => u.index)),
      };
    } else if (isPlainObject(value)) {
      const data: Record<string, unknown> = {};
      const indices: Record<string, number[]> = {};
      for (const u of inOrder) {
        const key = u.key as string;
        if (Array.isArray(value[key])) {
          let items = data[key] as unknown[] | undefined;
          if (!items) {
            items = [];
            data[key] = items;
          }
          items.push(u.value);
          const list = indices[key] ?? [];
          list.push(u.index);
          indices[key] = list;
        } else {
          data[key] = u.value;
          indices[key] ??= [];
        }
      }
      const field_ranges = Object.fromEntries(Object.entries(indices).map(([k, ix]) => [k, ranges(ix)]));
      batch = { batch_index, tokens: 0, data, field_ranges };
    } else batch = { batch_index, tokens: 0, data: inOrder[0]?.value };
    batch.tokens = ctx.countValue(batch.data);
    return batch;
  };

  const batches: Batch[] = [];
  let i = 0;
  while (i < ordered.length) {
    const group: Unit[] = [];
    let estimate = 2;
    while (i < ordered.length && (group.length === 0 || estimate + ordered[i]!.tokens <= size)) {
      estimate += ordered[i]!.tokens;
      group.push(ordered[i++]!);
    }
    let batch = build(group, batches.length);
    while (group.length > 1 && batch.tokens > size) {
      group.pop();
      i--;
      batch = build(group, batches.length);
    }
    if (group.length === 1 && batch.tokens > size) batch.oversize = true;
    batches.push(batch);
  }
  return finish(batches, config);
}

function finish(batches: Batch[], config: BatchConfig): BatchSplit {
  const kept = batches.slice(0, config.max_batches);
  return { batches: kept, total_batches: batches.length, omitted_batches: batches.length - kept.length };
}
