/**
 * Sentence boundaries without ICU for text made only of characters whose Sentence_Break property
 * (Unicode UAX #29) is listed here: ASCII letters, digits, spaces and common punctuation, CJK
 * ideographs and CJK sentence punctuation — most prose a summary reads. On such text the rules
 * SB4–SB11 below give ICU's boundaries; any other character (an accented letter, an ellipsis, a
 * curly quote, CR) and the caller asks `Intl.Segmenter`. Equality with ICU is tested on generated
 * strings of this alphabet (simple-sentences.test.ts), so a runtime whose ICU splits differently
 * fails the test instead of drifting.
 *
 * Why: `Intl.Segmenter` clones an ICU break iterator per call and allocates an object per segment;
 * splitting each record's text was a fifth of summarizing protocol 002's example.
 */

const UPPER = 1;
const LOWER = 2;
const NUMERIC = 3;
const SP = 4;
const LF = 5;
const ATERM = 6;
const STERM = 7;
const SCONTINUE = 8;
const CLOSE = 9;
const OLETTER = 10;
const OTHER = 11;

/** Sentence_Break class per BMP code unit; 0 for characters left to ICU. */
const CLASS = new Uint8Array(0x10000);
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = UPPER;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c] = LOWER;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = NUMERIC;
CLASS[0x20] = SP;
CLASS[0x09] = SP;
CLASS[0x0a] = LF;
CLASS[0x2e] = ATERM; // .
for (const c of [0x21, 0x3f, 0x3002, 0xff01, 0xff1f]) CLASS[c] = STERM; // ! ? 。 ！ ？
for (const c of [0x2c, 0x2d, 0x3a, 0x3b, 0x3001, 0xff0c, 0xff1a]) CLASS[c] = SCONTINUE; // , - : ; 、 ， ：
for (const c of [0x22, 0x27, 0x28, 0x29, 0x5b, 0x5d]) CLASS[c] = CLOSE; // " ' ( ) [ ]
for (const c of [0x23, 0x24, 0x25, 0x26, 0x2a, 0x2b, 0x2f, 0x3c, 0x3d, 0x3e, 0x40]) CLASS[c] = OTHER;
// The CJK Unified Ideographs assigned since Unicode 1.1 (later ones depend on the runtime's data).
for (let c = 0x4e00; c <= 0x9fa5; c++) CLASS[c] = OLETTER;

const isTerm = (k: number) => k === ATERM || k === STERM;

/**
 * The sentence segments of `text` (untrimmed, joining back to it) as `Intl.Segmenter` gives them,
 * or null when a character is not in the table.
 */
export function simpleSentences(text: string): string[] | null {
  const n = text.length;
  const k = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = CLASS[text.charCodeAt(i)]!;
    if (c === 0) return null;
    k[i] = c;
  }
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i < n; i++) {
    if (breaksBefore(k, i)) {
      out.push(text.slice(start, i));
      start = i;
    }
  }
  if (start < n) out.push(text.slice(start));
  return out;
}

/** Whether a sentence ends between k[i - 1] and k[i]: the first rule that applies decides. */
function breaksBefore(k: Uint8Array, i: number): boolean {
  const prev = k[i - 1]!;
  const cur = k[i]!;
  if (prev === LF) return true; // SB4: ParaSep ÷
  if (prev === ATERM && cur === NUMERIC) return false; // SB6: ATerm × Numeric
  // SB7: (Upper | Lower) ATerm × Upper
  if (prev === ATERM && cur === UPPER && i >= 2 && (k[i - 2] === UPPER || k[i - 2] === LOWER)) return false;
  // The rest need SATerm Close* Sp* right before i.
  let j = i - 1;
  while (j >= 0 && k[j] === SP) j--;
  const spaced = j < i - 1;
  while (j >= 0 && k[j] === CLOSE) j--;
  if (j < 0 || !isTerm(k[j]!)) return false; // SB998
  // SB8: ATerm Close* Sp* × (¬(OLetter | Upper | Lower | ParaSep | SATerm))* Lower
  if (k[j] === ATERM) {
    let m = i;
    while (m < k.length) {
      const q = k[m]!;
      if (q === OLETTER || q === UPPER || q === LOWER || q === LF || isTerm(q)) break;
      m++;
    }
    if (m < k.length && k[m] === LOWER) return false;
  }
  if (cur === SCONTINUE || isTerm(cur)) return false; // SB8a: SATerm Close* Sp* × (SContinue | SATerm)
  if (!spaced && cur === CLOSE) return false; // SB9: SATerm Close* × (Close | Sp | ParaSep)
  if (cur === SP || cur === LF) return false; // SB9, SB10: SATerm Close* Sp* × (Sp | ParaSep)
  return true; // SB11: SATerm Close* Sp* ParaSep? ÷
}
