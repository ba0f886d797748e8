/**
 * o200k's pre-tokenization without its regular expression where that is simple. The split regex
 * (Unicode property classes, seven alternatives, backtracking) is about a quarter of a cold count in
 * V8, and `match()` allocates every piece as a string even when the piece is a token whose rank one
 * hash probe finds. Here a piece is delimited by hand from char codes when every character it
 * depends on is ASCII, a letter in both of the regex's letter classes (Lm, Lo: Han, kana, Hangul,
 * Arabic, Thai letters…) or a symbol that is no letter, number, mark or space (CJK punctuation);
 * wherever the answer depends on another character (an accented letter, a combining mark, a digit of
 * another script, a Unicode space, a surrogate) the regex itself, sticky at that position, delimits
 * the piece. Every position starts a match of the
 * regex (any character is \s, a letter, a number or none of those, and some alternative takes each),
 * so pieces are contiguous and both paths give the same sequence. Equality with the regex is tested
 * on generated strings (o200k-pieces.test.ts).
 *
 * The regex, for reference (gpt-tokenizer's O200K_TOKEN_SPLIT_REGEX, flags `gu`):
 *   1. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|…))?
 *   2. [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|…))?
 *   3. \p{N}{1,3}   4.  ?[^\s\p{L}\p{N}]+[\r\n/]*   5. \s*[\r\n]+   6. \s+(?!\S)   7. \s+
 * In ASCII, Lu is [A-Z], Ll is [a-z], Lt/Lm/Lo/M are empty, \p{N} is [0-9] and \s is [\t\n\v\f\r ].
 * A run of Lm/Lo letters is in both [\p{Lu}…]* and [\p{Ll}…]+, so alternative 1 takes all of it
 * (with its prefix) when the character after it is in neither class and is no apostrophe.
 */

const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
/** Whitespace that may prefix a word: space, tab, vertical tab, form feed. */
const BLANK = 4;
const NEWLINE = 5;
/** Anything else in ASCII: punctuation, symbols, control characters. */
const OTHER = 6;

const CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 0x61; c <= 0x7a; c++) CLASS[c] = LOWER;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = UPPER;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = DIGIT;
for (const c of [0x09, 0x0b, 0x0c, 0x20]) CLASS[c] = BLANK;
CLASS[0x0a] = NEWLINE;
CLASS[0x0d] = NEWLINE;

/** Non-ASCII: a letter of both classes (Lm, Lo). */
const BOTH = 7;
/** Non-ASCII: a character the hand-written path does not decide on (the regex does). */
const UNKNOWN = 8;

const APOSTROPHE = 0x27;
const IN_BOTH = /^[\p{Lm}\p{Lo}]$/u;
const SYMBOL = /^[^\s\p{L}\p{N}\p{M}]$/u;

/** Classes of BMP characters above ASCII, computed from the runtime's Unicode tables on first sight. */
const wide = new Uint8Array(0x10000);

function classOf(c: number): number {
  if (c < 0x80) return CLASS[c]!;
  let k = wide[c]!;
  if (k === 0) {
    const s = String.fromCharCode(c);
    k = c >= 0xd800 && c <= 0xdfff ? UNKNOWN : IN_BOTH.test(s) ? BOTH : SYMBOL.test(s) ? OTHER : UNKNOWN;
    wide[c] = k;
  }
  return k;
}

/** Finds piece ends: by hand on ASCII, with the sticky regex elsewhere. */
export class O200kPieces {
  private readonly sticky: RegExp;

  /** `split` is o200k's split regex (its source; flags are set here). */
  constructor(split: RegExp) {
    this.sticky = new RegExp(split.source, 'uy');
  }

  /** The end of the piece that starts at `i` (< text.length). */
  end(text: string, i: number): number {
    const n = text.length;
    const c = text.charCodeAt(i);
    const k = classOf(c);
    if (k === LOWER || k === UPPER) return this.word(text, i, i);
    if (k === BOTH) return this.letters(text, i, i);
    if (k === UNKNOWN) return this.byRegex(text, i);
    if (k === DIGIT) {
      let j = i + 1;
      while (j < n && j < i + 3) {
        const kd = classOf(text.charCodeAt(j));
        if (kd === UNKNOWN) return this.byRegex(text, i); // maybe another \p{N}
        if (kd !== DIGIT) break;
        j++;
      }
      return j;
    }
    if (i + 1 < n && k !== NEWLINE) {
      // A one-character prefix of a word (alternatives 1 and 2).
      const kd = classOf(text.charCodeAt(i + 1));
      if (kd === LOWER || kd === UPPER) return this.word(text, i, i + 1);
      if (kd === BOTH) return this.letters(text, i, i + 1);
      if (kd === UNKNOWN) return this.byRegex(text, i);
      if (k === OTHER || (c === 0x20 && kd === OTHER)) return this.symbols(text, i, k === OTHER ? i : i + 1);
    } else if (k === OTHER) return this.symbols(text, i, i);
    // Whitespace: through the last line break (5); else all but the last blank before a
    // non-space (6), or the single blank (7), or all of it at the end of the text (6).
    let j = i;
    let lastBreak = -1;
    while (j < n) {
      const kd = classOf(text.charCodeAt(j));
      if (kd === UNKNOWN) return this.byRegex(text, i); // maybe more whitespace
      if (kd === NEWLINE) lastBreak = j;
      else if (kd !== BLANK) break;
      j++;
    }
    if (lastBreak >= 0) return lastBreak + 1;
    if (j === n || j - i === 1) return j;
    return j - 1;
  }

  /** Alternatives 1/2 from `from` (the prefix, if any, is [from, start)): [A-Z]*[a-z]* and a contraction. */
  private word(text: string, from: number, start: number): number {
    const n = text.length;
    let j = start;
    while (j < n && CLASS[text.charCodeAt(j)] === UPPER) j++;
    while (j < n && CLASS[text.charCodeAt(j)] === LOWER) j++;
    // A non-ASCII letter or mark would continue the word.
    if (j < n && text.charCodeAt(j) >= 0x80 && classOf(text.charCodeAt(j)) !== OTHER)
      return this.byRegex(text, from);
    if (j + 1 < n && text.charCodeAt(j) === APOSTROPHE) {
      // `| 0x20` lowercases an ASCII letter; only a letter's two cases map onto a lowercase letter.
      const a = text.charCodeAt(j + 1) | 0x20;
      if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return j + 2; // s d m t
      if (j + 2 < n) {
        const b = text.charCodeAt(j + 2) | 0x20;
        if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65))
          return j + 3; // ll ve re
      }
    }
    return j;
  }

  /** Alternative 1 over a run of Lm/Lo letters from `start` (prefix [from, start)). */
  private letters(text: string, from: number, start: number): number {
    const n = text.length;
    let j = start + 1;
    while (j < n && classOf(text.charCodeAt(j)) === BOTH) j++;
    if (j === n) return j;
    const kd = classOf(text.charCodeAt(j));
    // An ASCII letter, a mark or another letter would continue it; an apostrophe may add a contraction.
    if (kd === LOWER || kd === UPPER || kd === UNKNOWN || text.charCodeAt(j) === APOSTROPHE)
      return this.byRegex(text, from);
    return j;
  }

  /** Alternative 4 from `from`: an optional space, symbols from `start`, then [\r\n/]*. */
  private symbols(text: string, from: number, start: number): number {
    const n = text.length;
    let j = start;
    while (j < n) {
      const kd = classOf(text.charCodeAt(j));
      if (kd === UNKNOWN) return this.byRegex(text, from); // maybe another symbol
      if (kd !== OTHER) break;
      j++;
    }
    while (j < n) {
      const d = text.charCodeAt(j);
      if (d !== 0x0a && d !== 0x0d && d !== 0x2f) break;
      j++;
    }
    return j;
  }

  private byRegex(text: string, i: number): number {
    this.sticky.lastIndex = i;
    const m = this.sticky.exec(text);
    // Unreachable: every position starts a match (see the header); guard against a changed regex.
    if (m === null) throw new Error(`o200k split regex matched nothing at ${i}`);
    return i + m[0].length;
  }
}
