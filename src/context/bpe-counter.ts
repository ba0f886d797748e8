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
 * - pairs of single bytes come from a 256×256 table, other pairs with a partial character from a
 *   table keyed by the two ranks (bpe-pairs.ts): each is resolved through bytes once per counter;
 * - pieces of more than LONG_PIECE parts merge with a heap (bpe-heap.ts, O(n log n)), so a megabyte
 *   without a separator (base64, a DNA string, Han text without punctuation) cannot stall the process;
 * - o200k's split is done by hand from char codes where that is exact (o200k-pieces.ts): the regex
 *   was a quarter of a cold count, and a piece that is a token is then never built as a string;
 * - a counter remembers the counts of the short pieces it merged (PieceMemo), and the counters of
 *   one table share the pair ranks resolved so far, so re-counting a part of a counted text (a
 *   field, a sentence, a summary made of sentences) mostly costs the split.
 */

import { CharCollapser } from './bpe-chars.ts';
import { PieceCuts } from './bpe-cuts.ts';
import { mergeLongPiece } from './bpe-heap.ts';
import { PairTable } from './bpe-pairs.ts';
import { type BpeTables, hashRange, NO_RANK, TEXT_TOKEN } from './bpe-tables.ts';
import type { TextTokenCounter } from './encodings.ts';
import type { O200kPieces } from './o200k-pieces.ts';

/** Pieces of more parts than this merge with a heap instead of the quadratic scan. */
const LONG_PIECE = 128;
const UNKNOWN = -1;

/** Writes the UTF-8 bytes of `text` into `out` (grown as needed); returns [buffer, length]. */
function utf8(text: string, out: Uint8Array): [Uint8Array, number] {
  if (out.length < text.length * 3) out = new Uint8Array(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) out[n++] = c;
    else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 63);
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          out[n++] = 0xf0 | (c >> 18);
          out[n++] = 0x80 | ((c >> 12) & 63);
          out[n++] = 0x80 | ((c >> 6) & 63);
          out[n++] = 0x80 | (c & 63);
          continue;
        }
      }
      // A lone surrogate encodes as U+FFFD, as TextEncoder (and so gpt-tokenizer) does.
      if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 63);
      out[n++] = 0x80 | (c & 63);
    }
  }
  return [out, n];
}

/** The merge engine of one encoding: resolves pairs of ranks and merges pieces. */
export class BpeMerger {
  private readonly pairs = new PairTable();
  private readonly bytePairs = new Int32Array(65_536).fill(UNKNOWN);
  private buffer: Uint8Array = new Uint8Array(1024);
  private rank = new Int32Array(256);
  private pairRanks = new Int32Array(256);
  private next = new Int32Array(256);
  private prev = new Int32Array(256);
  private touched = new Uint8Array(256);
  private readonly chars: CharCollapser;
  private cutsOf: PieceCuts | undefined;
  /** BMP character → 1 + the tokens of that character alone (0: not counted yet). */
  private readonly charCounts = new Uint8Array(65_536);

  constructor(private readonly tables: BpeTables) {
    this.chars = new CharCollapser(tables, this);
  }

  /** Built on the first piece with non-ASCII letters (a pass over every token's text). */
  get cuts(): PieceCuts {
    this.cutsOf ??= new PieceCuts(this.tables);
    return this.cutsOf;
  }

  /** The tokens of one BMP character (not a surrogate) alone. */
  charCount(c: number): number {
    let n = this.charCounts[c]!;
    if (n === 0) {
      n = this.countPiece(String.fromCharCode(c)) + 1;
      this.charCounts[c] = n;
    }
    return n - 1;
  }

  /** The rank of the token whose bytes are those of parts `left` then `right`, or NO_RANK. */
  pairRank(left: number, right: number): number {
    const { tables } = this;
    const x = tables.byteOf[left]!;
    const y = tables.byteOf[right]!;
    if ((x | y) >= 0) {
      // Two single bytes (the first pass over every piece): a 256×256 table filled on demand.
      const k = (x << 8) | y;
      let r = this.bytePairs[k]!;
      if (r === UNKNOWN) {
        r = x < 0x80 && y < 0x80 ? tables.rankOfTextPair(left, right) : tables.rankOfBytePair(left, right);
        this.bytePairs[k] = r;
      }
      return r;
    }
    // Pairs recur (English syllables, partial characters): each is resolved once per table.
    const known = this.pairs.get(left, right);
    if (known !== PairTable.MISSING) return known;
    // Single bytes below 0x80 are text; those above are not.
    const text = (x === TEXT_TOKEN || (x >= 0 && x < 0x80)) && (y === TEXT_TOKEN || (y >= 0 && y < 0x80));
    // Most pairs of two text tokens (of Han characters: nearly all) are no token; the Bloom
    // filter says so without touching the big tables.
    const rank = text
      ? tables.mayHaveTextPair(left, right)
        ? tables.rankOfTextPair(left, right)
        : NO_RANK
      : tables.rankOfBytePair(left, right);
    this.pairs.set(left, right, rank);
    return rank;
  }

  /** The rank of a single byte (the parts BPE starts from). */
  byteRankOf(byte: number): number {
    return this.tables.singleByte[byte]!;
  }

  /** The number of tokens of one regex piece. */
  countPiece(text: string): number {
    // ASCII (most pieces that need merging): the parts are the char codes' byte tokens.
    const length = text.length;
    let ascii = 0;
    for (let i = 0; i < length; i++) ascii |= text.charCodeAt(i);
    if (ascii < 0x80) {
      if (length <= 1) return length;
      this.reserve(length);
      const single = this.tables.singleByte;
      for (let i = 0; i < length; i++) this.rank[i] = single[text.charCodeAt(i)]!;
      return length > LONG_PIECE ? mergeLongPiece(this, this.rank, length) : this.mergeShort(length);
    }
    const [bytes, n] = utf8(text, this.buffer);
    this.buffer = bytes;
    if (n <= 1) return n;
    this.reserve(n);
    const parts = this.rank;
    const single = this.tables.singleByte;
    let m = 0;
    // Whole characters where that is exact (bpe-chars.ts), bytes elsewhere.
    const touched = this.touched;
    this.chars.markCross(bytes, n, touched);
    for (let i = 0; i < n; ) {
      const b = bytes[i]!;
      const len = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
      let token = NO_RANK;
      if (len > 1 && i + len <= n) {
        let clear = true;
        for (let k = i; k < i + len; k++) if (touched[k] !== 0) clear = false;
        if (clear) token = this.chars.charToken(bytes, i, len);
      }
      if (token !== NO_RANK) {
        parts[m++] = token;
        i += len;
      } else {
        for (const end = Math.min(n, i + len); i < end; i++) parts[m++] = single[bytes[i]!]!;
      }
    }
    if (m > LONG_PIECE) return mergeLongPiece(this, parts, m);
    return this.mergeShort(m);
  }

  private reserve(n: number): void {
    if (this.rank.length >= n) return;
    this.rank = new Int32Array(n);
    this.pairRanks = new Int32Array(n);
    this.next = new Int32Array(n);
    this.prev = new Int32Array(n);
    this.touched = new Uint8Array(n);
  }

  /**
   * tiktoken's loop over a linked list of the n parts in this.rank: find the lowest pair rank
   * (leftmost on ties), merge, update the pairs on both sides of the merged part.
   */
  private mergeShort(n: number): number {
    const { rank, pairRanks, next, prev } = this;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    for (let i = 0; i < n - 1; i++) pairRanks[i] = this.pairRank(rank[i]!, rank[i + 1]!);
    pairRanks[n - 1] = NO_RANK;
    let parts = n;
    while (parts > 1) {
      let best = NO_RANK;
      let at = -1;
      for (let i = 0; i < n; i = next[i]!)
        if (pairRanks[i]! < best) {
          best = pairRanks[i]!;
          at = i;
        }
      if (at < 0) break;
      const j = next[at]!;
      rank[at] = best;
      next[at] = next[j]!;
      if (next[j]! < n) prev[next[j]!] = at;
      parts--;
      pairRanks[at] = next[at]! < n ? this.pairRank(best, rank[next[at]!]!) : NO_RANK;
      const p = prev[at]!;
      if (p >= 0) pairRanks[p] = this.pairRank(rank[p]!, best);
    }
    return parts;
  }
}

const FRONT_BITS = 12;
const FRONT_SLOTS = 1 << FRONT_BITS;

/** Distinct merged pieces one counter remembers; the memo starts over when full. */
const MEMO_ENTRIES = 1 << 15;
/** Longer pieces are not remembered (a long run rarely recurs; it would hold memory). */
const MEMO_CHARS = 64;
/** Twice the entries, so probes stay short; the hash's top MEMO_BITS bits pick the slot. */
const MEMO_BITS = 16;
const MEMO_SLOTS = 1 << MEMO_BITS;

/**
 * The counts of pieces that needed merging, by text. A planner counts the same text several times:
 * an input, then the fields it summarizes, their sentences and the summary built from them; BPE
 * pieces recur across those (and across a document), so each is merged once. A count depends on
 * the piece's text alone, so a remembered count is exact. Keyed by the hash the token lookup already
 * computed for the piece's range and confirmed against the remembered text, so a hit builds no
 * string. Only the pieces' own characters are kept: `slice` would keep the whole text it was cut
 * from alive, so a remembered piece is copied first.
 */
class PieceMemo {
  /** Slot i: [2i] the piece's hash, [2i + 1] index + 1 of its entry (0: empty). */
  private readonly slots = new Int32Array(MEMO_SLOTS * 2);
  // Preallocated, so every memo's arrays have one elements kind from the start: a `[]` that turns
  // from small integers to strings on its first push has another map in each new memo, and the
  // optimized lookup would be deoptimized for the next counter.
  private readonly pieces = new Array<string>(MEMO_ENTRIES).fill('');
  private readonly counts = new Int32Array(MEMO_ENTRIES);
  private size = 0;
  constructor(private readonly merger: BpeMerger) {}

  /** The tokens of text[start, end), whose hashRange is `h`. */
  count(text: string, start: number, end: number, h: number): number {
    if (end - start > MEMO_CHARS) return this.merger.countPiece(text.slice(start, end));
    const { slots, pieces } = this;
    const length = end - start;
    let i = Math.imul(h, 0x9e3779b1) >>> (32 - MEMO_BITS);
    for (; ; i = (i + 1) & (MEMO_SLOTS - 1)) {
      const entry = slots[i * 2 + 1]! - 1;
      if (entry < 0) break;
      if (slots[i * 2] === h) {
        const piece = pieces[entry]!;
        if (piece.length === length && text.startsWith(piece, start)) return this.counts[entry]!;
      }
    }
    // V8 keeps strings of 13+ characters cut by slice() as views of their parent; concatenating and
    // slicing again flattens a copy of just this piece.
    const piece = length < 13 ? text.slice(start, end) : `${text.slice(start, end)} `.slice(0, -1);
    const n = this.merger.countPiece(piece);
    if (this.size >= MEMO_ENTRIES) {
      slots.fill(0);
      pieces.fill('');
      this.size = 0;
      i = Math.imul(h, 0x9e3779b1) >>> (32 - MEMO_BITS);
      while (slots[i * 2 + 1] !== 0) i = (i + 1) & (MEMO_SLOTS - 1);
    }
    pieces[this.size] = piece;
    this.counts[this.size] = n;
    slots[i * 2] = h;
    slots[i * 2 + 1] = ++this.size;
    return n;
  }
}

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

  /** The tokens of `text`. */
  count(text: string): number {
    return this.pieces ? this.countByPieces(text, this.pieces) : this.countByRegex(text);
  }

  private countByPieces(text: string, pieces: O200kPieces): number {
    const { tables, front, frontHash } = this;
    let count = 0;
    for (let i = 0; i < text.length; ) {
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

  private countByRegex(text: string): number {
    // One match() call returns every piece; faster than an exec() loop building match objects.
    const pieces = text.match(this.regex);
    if (pieces === null) return 0;
    const { tables } = this;
    let count = 0;
    for (const piece of pieces) {
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
  return (text) => counter.count(text);
}
