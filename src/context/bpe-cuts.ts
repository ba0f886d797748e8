/**
 * Where byte-pair merging of a piece can be split in two: between two adjacent characters that no
 * token ever spans. Han (and other CJK) text is one pre-tokenization piece per run of letters, so
 * merging it was most of the work of counting Chinese; but o200k's tokens hold only ~16k distinct
 * pairs of adjacent non-ASCII characters, so in running Chinese nearly every character boundary is
 * such a cut and the run counts as the sum of its short segments (mostly single characters, whose
 * counts are remembered).
 *
 * Why it is exact. During BPE every part is a token (parts start as single bytes, and a merge makes
 * the token spelled by the two parts). A part that spans the boundary between characters a and b is
 * then a token whose bytes contain the last byte of a followed by the first byte of b: either well-
 * formed UTF-8 — its text holds a then b — or not, and then that byte pair sits at one of its inner
 * character boundaries. When neither can be, no part ever spans the boundary, so no merge joins the
 * left side to the right: each side merges exactly as it would alone (BPE takes the lowest-ranked
 * pair, leftmost first, and the two sides' pairs never interact), and the piece's count is the sum
 * of theirs. The check is conservative: a filter false positive, or a pair it does not decide
 * (ASCII, surrogates), only means no cut. Tested against the whole-piece merge (bpe-cuts.test.ts).
 */

import type { BpeTables } from './bpe-tables.ts';

/** The UTF-8 lead byte of a BMP character ≥ 0x80. */
const firstByte = (c: number) => (c < 0x800 ? 0xc0 | (c >> 6) : 0xe0 | (c >> 12));

export class PieceCuts {
  /** Byte pairs (hi << 8 | lo) at an inner character boundary of a token that is not UTF-8. */
  private readonly crossBoundary = new Uint8Array(65_536);

  constructor(private readonly tables: BpeTables) {
    for (const bytes of tables.invalidTokens())
      for (let i = 1; i < bytes.length; i++)
        if ((bytes[i]! & 0xc0) !== 0x80) this.crossBoundary[(bytes[i - 1]! << 8) | bytes[i]!] = 1;
  }

  /**
   * True when no token spans the boundary between UTF-16 units a and b (adjacent in a piece), so
   * the piece merges as the sum of both sides. Only decided for two non-ASCII BMP characters.
   */
  isCut(a: number, b: number): boolean {
    if (a < 0x80 || b < 0x80 || (a >= 0xd800 && a <= 0xdfff) || (b >= 0xd800 && b <= 0xdfff)) return false;
    if (this.tables.mayHaveWidePair(a, b)) return false;
    return this.crossBoundary[((0x80 | (a & 63)) << 8) | firstByte(b)] === 0;
  }
}
