/**
 * The lookup structures of one tiktoken rank table (the tables gpt-tokenizer ships: index = rank,
 * value = the token's text, or its bytes when they are not well-formed UTF-8).
 *
 * Tokens with text are found by a polynomial hash of their UTF-16 text in an open-addressing table
 * of ranks, and confirmed by comparing the text itself (so a hash collision can cost a comparison,
 * never a wrong answer). The hash of two tokens side by side is computed from their two hashes,
 * which answers "is there a token spelled left+right?" — the question byte-pair merging asks
 * millions of times — without building the joined string; for most pairs of Han characters the
 * answer is an empty slot.
 */

export const NO_RANK = 0x7fffffff;
/** byteOf of a token of two or more bytes that has text / that is not well-formed UTF-8. */
export const TEXT_TOKEN = -1;
export const BYTES_TOKEN = -2;

/** A rank table: index = rank, value = the token's text, or its bytes when they are not UTF-8. */
export type RankTable = ReadonlyArray<string | readonly number[] | undefined>;

const HASH_BASE = 0x01000193;
const BLOOM_BITS = 1 << 21;
const bloomA = (h: number) => h & (BLOOM_BITS - 1);
const bloomB = (h: number) => Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 11;

/** 64 KB of bits for the adjacent non-ASCII pairs of token texts. */
const WIDE_PAIR_BITS = 19;
const widePairHash = (a: number, b: number) => Math.imul((a << 16) | b, 0x9e3779b1) >>> (32 - WIDE_PAIR_BITS);

export const ASCII = 0;
export const VALID = 1;
export const INVALID = 2;

/** Whether bytes are ASCII, other well-formed UTF-8, or neither. */
export function utf8Kind(bytes: ArrayLike<number>): number {
  let kind = ASCII;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    kind = VALID;
    let need: number;
    let min: number;
    let cp: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
      cp = b & 0x0f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
      cp = b & 0x07;
    } else return INVALID;
    if (i + need >= bytes.length) return INVALID;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k]!;
      if ((c & 0xc0) !== 0x80) return INVALID;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return INVALID;
    i += need + 1;
  }
  return kind;
}

export function hashText(text: string): number {
  return hashRange(text, 0, text.length);
}

/** hashText of `text.slice(start, end)`, without the slice. */
export function hashRange(text: string, start: number, end: number): number {
  let h = 0;
  for (let i = start; i < end; i++) h = (Math.imul(h, HASH_BASE) + text.charCodeAt(i)) | 0;
  return h;
}

export class BpeTables {
  /** Per rank: the token's text, or null when its bytes are not UTF-8 (then see `latin1`). */
  readonly text: Array<string | null>;
  /** Per rank: the token's bytes as a latin1 string, filled in when first needed. */
  private readonly latin1: Array<string | undefined>;
  /** Token bytes as a latin1 string → rank, for tokens whose bytes are not UTF-8. */
  private readonly byteRank = new Map<string, number>();
  /** The rank of each single byte (the parts merging starts from). */
  readonly singleByte = new Int32Array(256).fill(NO_RANK);
  /**
   * Per rank: the byte of a single-byte token; for longer tokens TEXT_TOKEN when it has text, else
   * BYTES_TOKEN. One 2-byte read tells the merger what `text` would (a pointer array 4× the size).
   */
  readonly byteOf: Int16Array;
  /** Per rank: [2r] the hash of the token's text, [2r + 1] its length (one cache line for both). */
  private readonly textInfo: Int32Array;
  /** HASH_BASE^k for k up to the longest text token. */
  private readonly powers: Int32Array;
  /**
   * A bit per hash of two non-ASCII UTF-16 units: set when they are adjacent in some token's text
   * (o200k: ~16k pairs; a false positive only costs a cut, see bpe-cuts.ts).
   */
  private readonly widePairs = new Int32Array((1 << WIDE_PAIR_BITS) >>> 5);
  /** A Bloom filter of the text tokens' hashes (256 KB, stays in cache): a clear bit = no token. */
  private readonly bloom = new Int32Array(BLOOM_BITS >>> 5);
  /**
   * Open addressing, two numbers a slot: [2i] rank + 1 of a text token (0: empty), [2i + 1] its
   * hash, so a probe that is not the token is told apart without reading the token's own entries.
   */
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly shift: number;

  constructor(ranks: RankTable) {
    const n = ranks.length;
    this.text = new Array<string | null>(n).fill(null);
    this.latin1 = new Array<string | undefined>(n);
    this.textInfo = new Int32Array(n * 2);
    this.byteOf = new Int16Array(n).fill(BYTES_TOKEN);
    let bits = 1;
    while (1 << bits < n * 2.5) bits++;
    this.slots = new Int32Array(2 << bits);
    this.mask = (1 << bits) - 1;
    this.shift = 32 - bits;
    let longest = 1;
    for (let rank = 0; rank < n; rank++) {
      const token = ranks[rank];
      if (token === undefined) continue;
      let t: string | null = null;
      if (typeof token === 'string') t = token;
      else {
        const bytes = Uint8Array.from(token);
        this.latin1[rank] = Buffer.from(bytes).toString('latin1');
        // Well-formed bytes stored as numbers are indexed by their text like the others.
        if (utf8Kind(bytes) !== INVALID) t = Buffer.from(bytes).toString('utf8');
        else this.byteRank.set(this.latin1[rank]!, rank);
        if (token.length === 1) this.singleByte[token[0]!] = rank;
      }
      if (t === null) continue;
      if (t.length === 1 && t.charCodeAt(0) < 0x80) this.singleByte[t.charCodeAt(0)] = rank;
      this.text[rank] = t;
      this.byteOf[rank] = TEXT_TOKEN;
      // hashText, and the pairs of adjacent non-ASCII characters in one pass.
      let h = 0;
      for (let k = 0; k < t.length; k++) {
        const c = t.charCodeAt(k);
        h = (Math.imul(h, HASH_BASE) + c) | 0;
        if (c >= 0x80 && k > 0 && t.charCodeAt(k - 1) >= 0x80) {
          const p = widePairHash(t.charCodeAt(k - 1), c);
          this.widePairs[p >>> 5]! |= 1 << (p & 31);
        }
      }
      this.textInfo[rank * 2] = h;
      this.textInfo[rank * 2 + 1] = t.length;
      if (t.length > longest) longest = t.length;
      this.bloom[bloomA(h) >>> 5]! |= 1 << (h & 31);
      this.bloom[bloomB(h) >>> 5]! |= 1 << (bloomB(h) & 31);
      let i = this.slot(h);
      while (this.slots[i * 2] !== 0) i = (i + 1) & this.mask;
      this.slots[i * 2] = rank + 1;
      this.slots[i * 2 + 1] = h;
    }
    for (let b = 0; b < 256; b++) {
      if (this.singleByte[b] === NO_RANK) throw new Error(`rank table has no token for byte ${b}`);
      this.byteOf[this.singleByte[b]!] = b;
    }
    this.powers = new Int32Array(longest + 1);
    this.powers[0] = 1;
    for (let k = 1; k <= longest; k++) this.powers[k] = Math.imul(this.powers[k - 1]!, HASH_BASE);
  }

  private slot(h: number): number {
    return Math.imul(h, 0x9e3779b1) >>> this.shift;
  }

  /** The rank of the token spelled `text`, or NO_RANK. */
  rankOfText(text: string): number {
    const h = hashText(text);
    const { mask, slots } = this;
    for (let i = this.slot(h); ; i = (i + 1) & mask) {
      const r = slots[i * 2]! - 1;
      if (r < 0) return NO_RANK;
      if (slots[i * 2 + 1] === h && this.text[r] === text) return r;
    }
  }

  /** The rank of the token spelled `text.slice(start, end)`, or NO_RANK, without the slice. */
  rankOfRange(text: string, start: number, end: number): number {
    return this.rankOfHashedRange(text, start, end, hashRange(text, start, end));
  }

  /** rankOfRange with the range's hashRange already computed (the caller keys its memo by it). */
  rankOfHashedRange(text: string, start: number, end: number, h: number): number {
    const length = end - start;
    const { mask, slots } = this;
    for (let i = this.slot(h); ; i = (i + 1) & mask) {
      const r = slots[i * 2]! - 1;
      if (r < 0) return NO_RANK;
      if (slots[i * 2 + 1] === h) {
        const t = this.text[r]!;
        if (t.length === length && text.startsWith(t, start)) return r;
      }
    }
  }

  /** False when no token's text holds UTF-16 units a then b (both ≥ 0x80); true may be a false positive. */
  mayHaveWidePair(a: number, b: number): boolean {
    const p = widePairHash(a, b);
    return (this.widePairs[p >>> 5]! & (1 << (p & 31))) !== 0;
  }

  /** False when no token is spelled as text token `left` then text token `right` (a Bloom filter). */
  mayHaveTextPair(left: number, right: number): boolean {
    const info = this.textInfo;
    const length = info[right * 2 + 1]!;
    if (info[left * 2 + 1]! + length >= this.powers.length) return false;
    const h = (Math.imul(info[left * 2]!, this.powers[length]!) + info[right * 2]!) | 0;
    if ((this.bloom[bloomA(h) >>> 5]! & (1 << (h & 31))) === 0) return false;
    const hb = bloomB(h);
    return (this.bloom[hb >>> 5]! & (1 << (hb & 31))) !== 0;
  }

  /**
   * The rank of the token spelled as text token `left` followed by text token `right`, or NO_RANK.
   * (Two well-formed halves make a well-formed whole, so the answer is a text token or none.)
   */
  rankOfTextPair(left: number, right: number): number {
    const a = this.text[left]!;
    const b = this.text[right]!;
    const length = a.length + b.length;
    if (length >= this.powers.length) return NO_RANK;
    const h = (Math.imul(this.textInfo[left * 2]!, this.powers[b.length]!) + this.textInfo[right * 2]!) | 0;
    if ((this.bloom[bloomA(h) >>> 5]! & (1 << (h & 31))) === 0) return NO_RANK;
    const hb = bloomB(h);
    if ((this.bloom[hb >>> 5]! & (1 << (hb & 31))) === 0) return NO_RANK;
    const { mask, slots } = this;
    for (let i = this.slot(h); ; i = (i + 1) & mask) {
      const r = slots[i * 2]! - 1;
      if (r < 0) return NO_RANK;
      if (slots[i * 2 + 1] === h) {
        const t = this.text[r]!;
        if (t.length === length && t.startsWith(a) && t.endsWith(b)) return r;
      }
    }
  }

  /** The bytes of every token that is not well-formed UTF-8. */
  *invalidTokens(): Generator<Uint8Array> {
    for (const key of this.byteRank.keys()) yield Buffer.from(key, 'latin1');
  }

  /** The rank of the token whose bytes are those of `left` then `right`, or NO_RANK. */
  rankOfBytePair(left: number, right: number): number {
    const key = this.latin1Of(left) + this.latin1Of(right);
    const rank = this.byteRank.get(key);
    if (rank !== undefined) return rank;
    const bytes = Buffer.from(key, 'latin1');
    if (utf8Kind(bytes) === INVALID) return NO_RANK;
    return this.rankOfText(bytes.toString('utf8'));
  }

  private latin1Of(rank: number): string {
    let s = this.latin1[rank];
    if (s === undefined) {
      s = Buffer.from(this.text[rank]!, 'utf8').toString('latin1');
      this.latin1[rank] = s;
    }
    return s;
  }
}
