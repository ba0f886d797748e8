/**
 * The byte-pair merge of one regex piece over a tiktoken rank table: the parts start as the piece's
 * bytes (whole characters where that merges the same, bpe-chars.ts), then tiktoken's loop merges the
 * adjacent pair whose bytes form the lowest-ranked token, leftmost first (bpe-counter.ts explains
 * what is done before a piece gets here). Pair ranks are resolved on demand and remembered for the
 * table (bpe-pairs.ts); pieces of more than LONG_PIECE parts merge with a heap (bpe-heap.ts).
 */

import { CharCollapser } from './bpe-chars.ts';
import { PieceCuts } from './bpe-cuts.ts';
import { mergeLongPiece } from './bpe-heap.ts';
import { PairTable } from './bpe-pairs.ts';
import { type BpeTables, NO_RANK, TEXT_TOKEN } from './bpe-tables.ts';

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
  /** The same for two ASCII characters, keyed by their char codes (c << 7 | d): 64 KB, stays in cache. */
  private readonly asciiPairs = new Int32Array(1 << 14).fill(UNKNOWN);
  private buffer: Uint8Array = new Uint8Array(1024);
  private rank = new Int32Array(256);
  private pairRanks = new Int32Array(256);
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
      const { rank, pairRanks, asciiPairs, tables } = this;
      const single = tables.singleByte;
      for (let i = 0; i < length; i++) rank[i] = single[text.charCodeAt(i)]!;
      if (length > LONG_PIECE) return mergeLongPiece(this, rank, length);
      // The first pairs from the char codes: no rank-to-byte table is read.
      let c = text.charCodeAt(0);
      for (let i = 0; i < length - 1; i++) {
        const d = text.charCodeAt(i + 1);
        let r = asciiPairs[(c << 7) | d]!;
        if (r === UNKNOWN) {
          r = tables.rankOfTextPair(rank[i]!, rank[i + 1]!);
          asciiPairs[(c << 7) | d] = r;
        }
        pairRanks[i] = r;
        c = d;
      }
      return this.mergeShort(length, true);
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
    for (let i = 0; i < m - 1; i++) this.pairRanks[i] = this.pairRank(parts[i]!, parts[i + 1]!);
    return this.mergeShort(m, false);
  }

  private reserve(n: number): void {
    if (this.rank.length >= n) return;
    this.rank = new Int32Array(n);
    this.pairRanks = new Int32Array(n);
    this.touched = new Uint8Array(n);
  }

  /**
   * The rank of the token spelled by text tokens `left` then `right` (or ASCII single bytes), for a
   * pair of parts of an ASCII piece: pairRank without reading which byte a part is (one of them is
   * a merged part, never a single byte), so a step of an English word's merge reads the pair table
   * alone. Shares that table with pairRank: both store the same answer for a pair.
   */
  private textPairRank(left: number, right: number): number {
    const known = this.pairs.get(left, right);
    if (known !== PairTable.MISSING) return known;
    const { tables } = this;
    const rank = tables.mayHaveTextPair(left, right) ? tables.rankOfTextPair(left, right) : NO_RANK;
    this.pairs.set(left, right, rank);
    return rank;
  }

  /**
   * tiktoken's loop over the n parts in this.rank, whose pair ranks the caller put in
   * this.pairRanks: find the lowest pair rank (leftmost on ties), merge, update the pairs on both
   * sides of the merged part. The parts stay packed (a merge moves the ones after it down, as
   * tiktoken's Vec::remove does): for the short pieces that reach here that is a few moves in one
   * cache line, and each scan reads only the live pairs. `ascii`: every part is ASCII text.
   */
  private mergeShort(n: number, ascii: boolean): number {
    const { rank, pairRanks } = this;
    let parts = n;
    while (parts > 1) {
      let best = NO_RANK;
      let at = -1;
      for (let i = 0; i < parts - 1; i++)
        if (pairRanks[i]! < best) {
          best = pairRanks[i]!;
          at = i;
        }
      if (at < 0) break;
      rank[at] = best;
      parts--;
      for (let i = at + 1; i < parts; i++) rank[i] = rank[i + 1]!;
      for (let i = at + 1; i < parts - 1; i++) pairRanks[i] = pairRanks[i + 1]!;
      if (at < parts - 1)
        pairRanks[at] = ascii ? this.textPairRank(best, rank[at + 1]!) : this.pairRank(best, rank[at + 1]!);
      if (at > 0)
        pairRanks[at - 1] = ascii
          ? this.textPairRank(rank[at - 1]!, best)
          : this.pairRank(rank[at - 1]!, best);
    }
    return parts;
  }
}
