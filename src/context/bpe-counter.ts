/**
 * An exact byte-pair-encoding token counter over a tiktoken rank table. It gives the count of
 * tiktoken's algorithm — split the text with the encoding's regex, then in each piece repeatedly
 * merge the adjacent pair whose bytes form the lowest-ranked token, leftmost first — and is checked
 * against gpt-tokenizer on a multilingual corpus and generated strings (bpe-counter.test.ts).
 *
 * Why not gpt-tokenizer's own counter: on 1 MB of mixed English/Chinese its first count runs at
 * ~0.5 MB/s (bench/context.ts). A run of Han characters is one regex piece, and its merge loop looks
 * every pair up by decoding the byte slice to a string (binary-searching when that fails) on each of
 * O(n²) steps. Here:
 * - a piece that is itself a token is one hash-table probe (most English words);
 * - multi-byte characters start as their own token instead of 2–4 bytes wherever that provably
 *   gives the same result (bpe-chars.ts), which cuts most of the work on Han text;
 * - a pair of text tokens is looked up by a hash combined from the two tokens' hashes, so no string
 *   is built for the (mostly absent) pairs of Han characters (bpe-tables.ts);
 * - pairs of single bytes come from a 256×256 table (an ASCII piece's first pairs from a 128×128
 *   one keyed by the char codes), other pairs from a table keyed by the two ranks (bpe-pairs.ts):
 *   each is resolved once per table; the merge itself is bpe-merger.ts;
 * - pieces of more than 128 parts merge with a heap (bpe-heap.ts, O(n log n)), so a megabyte
 *   without a separator (base64, a DNA string, Han text without punctuation) cannot stall the process;
 * - o200k's split is done by hand from char codes where that is exact (o200k-pieces.ts): the regex
 *   was a quarter of a cold count, and a piece that is a token is then never built as a string;
 * - a counter remembers the counts of the short pieces it merged (piece-memo.ts), and the counters of
 *   one table share the pair ranks resolved so far, so re-counting a part of a counted text (a
 *   field, a sentence, a summary made of sentences) mostly costs the split.
 */

import { BpeMerger } from './bpe-merger.ts';
import { type BpeTables, hashRange, NO_RANK } from './bpe-tables.ts';
import type { TextTokenCounter } from './encodings.ts';
import type { O200kPieces } from './o200k-pieces.ts';
import { PieceMemo } from './piece-memo.ts';

const FRONT_BITS = 12;
/** A limit no count reaches (a small integer, so the loop's comparison stays on integers). */
const UNBOUNDED = 0x3fffffff;
const FRONT_SLOTS = 1 << FRONT_BITS;

/**
 * One merger per rank table, shared by its counters: the pair ranks it resolves on demand are a
 * function of the table alone (a lazily built part of it), so a new planner need not find them
 * again. Its scratch buffers are only used inside one synchronous countPiece call.
 */
const mergers = new WeakMap<BpeTables, BpeMerger>();

/**
 * One counter's state and its per-piece loop. A class rather than closures over the state: the
 * optimized code of a closure inlines the closures it calls, so every new counter's closures were
 * "wrong call targets" and the hot loop was deoptimized and compiled again for the second counter
 * of a process (a new planner); methods of one class share their code across instances.
 */
class PieceCounter {
  private readonly memo: PieceMemo;
  // The tokens seen last, by hash (a direct-mapped 32 KB front of the rank table, whose 4 MB of
  // slots cost a cache miss a piece): common words repeat, and a hit compares the token's own text.
  private readonly front = new Array<string>(FRONT_SLOTS).fill('');
  private readonly frontHash = new Int32Array(FRONT_SLOTS);

  constructor(
    private readonly tables: BpeTables,
    private readonly merger: BpeMerger,
    private readonly pieces: O200kPieces | undefined,
    private readonly regex: RegExp,
  ) {
    this.memo = new PieceMemo(merger);
  }

  /** The tokens of `text`, or, once they pass `limit`, the tokens of the pieces counted so far. */
  count(text: string, limit: number): number {
    return this.pieces ? this.countByPieces(text, this.pieces, limit) : this.countByRegex(text, limit);
  }

  private countByPieces(text: string, pieces: O200kPieces, limit: number): number {
    const { tables, front, frontHash } = this;
    let count = 0;
    for (let i = 0; i < text.length && count <= limit; ) {
      const end = pieces.end(text, i);
      const h = hashRange(text, i, end);
      const slot = Math.imul(h, 0x9e3779b1) >>> (32 - FRONT_BITS);
      const known = front[slot]!;
      if (frontHash[slot] === h && known.length === end - i && text.startsWith(known, i)) count++;
      else {
        const r = tables.rankOfHashedRange(text, i, end, h);
        if (r !== NO_RANK) {
          front[slot] = tables.text[r]!;
          frontHash[slot] = h;
          count++;
        } else count += this.merged(text, i, end, h);
      }
      i = end;
    }
    return count;
  }

  private countByRegex(text: string, limit: number): number {
    // One match() call returns every piece; faster than an exec() loop building match objects.
    const pieces = text.match(this.regex);
    if (pieces === null) return 0;
    const { tables } = this;
    let count = 0;
    for (const piece of pieces) {
      if (count > limit) break;
      const h = hashRange(piece, 0, piece.length);
      count +=
        tables.rankOfHashedRange(piece, 0, piece.length, h) !== NO_RANK
          ? 1
          : this.merged(piece, 0, piece.length, h);
    }
    return count;
  }

  /** The tokens of a piece that is no token, whose hashRange is `h`: split at cuts (bpe-cuts.ts). */
  private merged(text: string, start: number, end: number, h: number): number {
    // A piece of non-ASCII letters ends with one; other pieces are never cut.
    if (end - start < 2 || text.charCodeAt(end - 1) < 0x80) return this.memo.count(text, start, end, h);
    const cuts = this.merger.cuts;
    let total = 0;
    let from = start;
    let a = text.charCodeAt(start);
    for (let j = start + 1; j < end; j++) {
      const b = text.charCodeAt(j);
      if (cuts.isCut(a, b)) {
        total += this.segment(text, from, j);
        from = j;
      }
      a = b;
    }
    return from === start ? this.memo.count(text, start, end, h) : total + this.segment(text, from, end);
  }

  /** A segment of a split piece: one character, a token, or merged through the memo. */
  private segment(text: string, start: number, end: number): number {
    if (end - start === 1) return this.merger.charCount(text.charCodeAt(start));
    const h = hashRange(text, start, end);
    return this.tables.rankOfHashedRange(text, start, end, h) !== NO_RANK
      ? 1
      : this.memo.count(text, start, end, h);
  }
}

/**
 * Creates an exact counter for one rank table and its pre-tokenization regex (global, unicode).
 * With `pieces` (o200k), pieces are delimited by hand where that is exact (o200k-pieces.ts) and a
 * piece that is a token is found from its range, without building its string (most pieces).
 */
export function createBpeCounter(tables: BpeTables, split: RegExp, pieces?: O200kPieces): TextTokenCounter {
  let merger = mergers.get(tables);
  if (!merger) {
    merger = new BpeMerger(tables);
    mergers.set(tables, merger);
  }
  const regex = new RegExp(split.source, split.flags.includes('g') ? split.flags : `${split.flags}g`);
  const counter = new PieceCounter(tables, merger, pieces, regex);
  return Object.assign((text: string) => counter.count(text, UNBOUNDED), {
    upTo: (text: string, limit: number) => counter.count(text, limit),
  });
}
