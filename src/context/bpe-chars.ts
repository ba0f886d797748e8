/**
 * Starting a piece's merge from whole characters instead of bytes, where that provably gives the
 * same tokens. Byte-level BPE spends most of its work on Han (and other multi-byte) text joining
 * each character's 2–4 bytes back together; this does that once per distinct character.
 *
 * Why it is exact. Call a token "cross" if its bytes are not well-formed UTF-8 and contain a
 * character boundary (it joins part of one character to a neighbour). A multi-byte character c of
 * a piece is collapsed to its token T_c only when
 *   (a) no cross token occurs in the piece's bytes overlapping c, and
 *   (b) c alone merges to the single token T_c, and no merge on the way has a higher rank than T_c.
 * Then, in the byte-level run: (1) a part holding only some of c's bytes never merges with a part
 * outside c — the result would be a cross token occurring over c, excluded by (a); so c's bytes
 * merge exactly as c alone does. (2) Every token that holds c and more has a higher rank than T_c:
 * each token of these vocabularies splits into two tokens of lower rank (checked for every token in
 * bpe-chars.test.ts), and by (a) that split cannot cut through c or end inside another character
 * while holding c, so by induction the part holding c has a rank ≥ rank(T_c). (3) Whenever the
 * byte-level run picks a merge of rank r while c is still in bytes, c's next merge has a rank ≥ r,
 * so by (b) rank(T_c) ≥ r, and every pair that joining c early would add has a rank > rank(T_c) ≥ r
 * — it cannot be picked first. So the runs make the same merges outside c in the same order, and
 * end with the same parts. Characters failing (a) or (b) stay as bytes.
 */

import { type BpeTables, NO_RANK } from './bpe-tables.ts';

export interface PairRanker {
  pairRank(left: number, right: number): number;
}

const isContinuation = (b: number) => (b & 0xc0) === 0x80;

interface CrossToken {
  bytes: Uint8Array;
  /** Index of its last character boundary: bytes[at - 1], bytes[at] is the indexed pair. */
  at: number;
}

export class CharCollapser {
  /** Cross tokens by the byte pair at their last inner boundary (hi << 8 | lo). */
  private readonly cross = new Map<number, CrossToken[]>();
  private readonly crossPair = new Uint8Array(65_536);
  /** BMP code point → rank + 1 of its token when it can be collapsed, -1 when not, 0 unknown. */
  private readonly bmp = new Int32Array(65_536);
  private readonly astral = new Map<number, number>();

  constructor(
    private readonly tables: BpeTables,
    private readonly ranker: PairRanker,
  ) {
    for (const bytes of tables.invalidTokens()) {
      let at = -1;
      for (let i = bytes.length - 1; i >= 1; i--)
        if (!isContinuation(bytes[i]!)) {
          at = i;
          break;
        }
      if (at < 0) continue; // a piece of one character: not cross
      const key = (bytes[at - 1]! << 8) | bytes[at]!;
      this.crossPair[key] = 1;
      const list = this.cross.get(key);
      if (list) list.push({ bytes, at });
      else this.cross.set(key, [{ bytes, at }]);
    }
  }

  /** Marks (touched[i] = 1) the bytes of piece[0, n) covered by an occurrence of a cross token. */
  markCross(piece: Uint8Array, n: number, touched: Uint8Array): void {
    touched.fill(0, 0, n);
    for (let i = 1; i < n; i++) {
      const b = piece[i]!;
      if (isContinuation(b)) continue;
      const key = (piece[i - 1]! << 8) | b;
      if (this.crossPair[key] === 0) continue;
      for (const { bytes, at } of this.cross.get(key)!) {
        const start = i - at;
        const end = start + bytes.length;
        if (start < 0 || end > n) continue;
        let k = 0;
        while (k < bytes.length && piece[start + k] === bytes[k]) k++;
        if (k === bytes.length) touched.fill(1, start, end);
      }
    }
  }

  /** The token of the character piece[at, at + len) when condition (b) holds, else NO_RANK. */
  charToken(piece: Uint8Array, at: number, len: number): number {
    let cp: number;
    if (len === 2) cp = ((piece[at]! & 0x1f) << 6) | (piece[at + 1]! & 0x3f);
    else if (len === 3)
      cp = ((piece[at]! & 0x0f) << 12) | ((piece[at + 1]! & 0x3f) << 6) | (piece[at + 2]! & 0x3f);
    else
      cp =
        ((piece[at]! & 0x07) << 18) |
        ((piece[at + 1]! & 0x3f) << 12) |
        ((piece[at + 2]! & 0x3f) << 6) |
        (piece[at + 3]! & 0x3f);
    let known = cp < 65_536 ? this.bmp[cp]! : (this.astral.get(cp) ?? 0);
    if (known === 0) {
      const rank = this.isolated(piece, at, len);
      known = rank === NO_RANK ? -1 : rank + 1;
      if (cp < 65_536) this.bmp[cp] = known;
      else this.astral.set(cp, known);
    }
    return known < 0 ? NO_RANK : known - 1;
  }

  /** Merges one character's bytes alone; its token if it becomes one with no higher merge on the way. */
  private isolated(piece: Uint8Array, at: number, len: number): number {
    const parts: number[] = [];
    for (let i = 0; i < len; i++) parts.push(this.tables.singleByte[piece[at + i]!]!);
    let highest = -1;
    while (parts.length > 1) {
      let best = NO_RANK;
      let where = -1;
      for (let i = 0; i + 1 < parts.length; i++) {
        const r = this.ranker.pairRank(parts[i]!, parts[i + 1]!);
        if (r < best) {
          best = r;
          where = i;
        }
      }
      if (where < 0) return NO_RANK;
      parts.splice(where, 2, best);
      highest = Math.max(highest, best);
    }
    return highest <= parts[0]! ? parts[0]! : NO_RANK;
  }
}
