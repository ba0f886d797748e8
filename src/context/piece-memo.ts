/**
 * A counter's memory of the pieces it had to merge: re-counting a field, a sentence or a summary of
 * counted text then costs the split and one probe per piece, not the merging (PieceMemo below).
 */

import type { BpeMerger } from './bpe-merger.ts';

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
export class PieceMemo {
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
