/**
 * Splitting text into blocks, sentences and words for English and Chinese with `Intl.Segmenter`
 * (ICU: it splits Chinese sentences on 。！？ and Chinese words by dictionary). Segmenters are
 * immutable, so the few this file needs are created once, lazily. Sentences of plain ASCII and CJK
 * text are split by hand with ICU's rules (simple-sentences.ts, tested equal to ICU).
 */

import { simpleSentences } from './simple-sentences.ts';

export type Language = 'zh' | 'en';

export interface Sentence {
  /** The sentence, trimmed. */
  text: string;
  /** Index of its block (a paragraph, or one bullet line). */
  block: number;
  /** Position inside its block, 0 for the block's lead sentence. */
  indexInBlock: number;
  /** Whether its block is a bullet or numbered line. */
  bullet: boolean;
}

const HAN_CHAR = /^\p{Script=Han}$/u;
const LETTER_CHAR = /^\p{L}$/u;
const NOT_LETTER = 0;
const LETTER = 1;
const HAN = 2;
/** Per BMP code unit: 0 unknown, else 1 + NOT_LETTER / LETTER / HAN, filled in on first sight. */
const kinds = new Uint8Array(0x10000);

function kindOf(char: string): number {
  return HAN_CHAR.test(char) ? HAN : LETTER_CHAR.test(char) ? LETTER : NOT_LETTER;
}

/**
 * 'zh' when Han characters are at least 30% of the letters (by code point), else 'en'. A loop over
 * char codes with each character's class looked up once: the regular expressions it replaces
 * (`\p{L}+`, `\p{Script=Han}+`) ran twice over every text a summary reads.
 */
export function detectLanguage(text: string): Language {
  const end = Math.min(text.length, 20_000);
  let letters = 0;
  let han = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    let kind: number;
    if (c < 0x80) kind = (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a ? LETTER : NOT_LETTER;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
      const d = text.charCodeAt(i + 1);
      // A surrogate pair is one code point; a lone surrogate is no letter.
      if (d >= 0xdc00 && d <= 0xdfff) {
        kind = kindOf(text.slice(i, i + 2));
        i++;
      } else kind = NOT_LETTER;
    } else {
      kind = kinds[c]! - 1;
      if (kind < 0) {
        kind = c >= 0xd800 && c <= 0xdfff ? NOT_LETTER : kindOf(String.fromCharCode(c));
        kinds[c] = kind + 1;
      }
    }
    if (kind !== NOT_LETTER) letters++;
    if (kind === HAN) han++;
  }
  if (letters === 0) return 'en';
  return han / letters >= 0.3 ? 'zh' : 'en';
}

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(language: Language, granularity: 'sentence' | 'word'): Intl.Segmenter {
  const key = `${language}:${granularity}`;
  let s = segmenters.get(key);
  if (!s) {
    s = new Intl.Segmenter(language, { granularity });
    segmenters.set(key, s);
  }
  return s;
}

// V8's segment iterator slows down quadratically on long inputs (measured on Node 20: 400 KB of
// prose takes 0.6 s by sentence, 200 KB takes 13 s by word). Segmenting windows of ≤ 2 KB cut at a
// likely boundary keeps it linear; a window ends after sentence punctuation in its second half, else
// after whitespace, else (unbroken CJK or a hash) anywhere but inside a surrogate pair.
const WINDOW = 2048;
// ASCII punctuation ends a sentence only before whitespace ("3.5" does not); CJK punctuation always.
const SENTENCE_END = /[.!?;…]["'”’)\]]*\s+|[。！？；]["'”’）]*\s*/g;
const SPACE = /\s+/g;

function lastBoundary(slice: string, pattern: RegExp): number {
  let best = -1;
  pattern.lastIndex = slice.length >> 1;
  for (let m = pattern.exec(slice); m !== null; m = pattern.exec(slice)) {
    best = m.index + m[0].length;
    if (m[0].length === 0) pattern.lastIndex++;
  }
  return best;
}

function segmentsOf(
  text: string,
  language: Language,
  granularity: 'sentence' | 'word',
): Iterable<Intl.SegmentData> {
  const seg = segmenter(language, granularity);
  // One window: ICU's own iterable, without a generator around it (most texts a summary reads).
  if (text.length <= WINDOW) return seg.segment(text);
  return (function* () {
    for (const window of windowsOf(text, granularity)) yield* seg.segment(window);
  })();
}

/** The sentence segments of a text (untrimmed): by hand where simple-sentences.ts can, else ICU. */
function sentenceTexts(text: string, language: Language): string[] {
  const out: string[] = [];
  const add = (window: string) => {
    const simple = simpleSentences(window);
    if (simple) for (const s of simple) out.push(s);
    else for (const { segment } of segmenter(language, 'sentence').segment(window)) out.push(segment);
  };
  if (text.length <= WINDOW) add(text);
  else for (const window of windowsOf(text, 'sentence')) add(window);
  return out;
}

function* windowsOf(text: string, granularity: 'sentence' | 'word'): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + WINDOW);
    if (end < text.length) {
      const slice = text.slice(start, end);
      // No sentence end in a 2 KB run: cut at a space, so no word is split.
      const cut = granularity === 'sentence' ? lastBoundary(slice, SENTENCE_END) : -1;
      const at = cut > 0 ? cut : lastBoundary(slice, SPACE);
      if (at > 0) end = start + at;
      else if (/[\ud800-\udbff]/.test(text.charAt(end - 1))) end--;
    }
    yield text.slice(start, end);
    start = end;
  }
}

const BULLET =
  /^\s*(?:[-*•·▪◦‣]|\d{1,3}[.)、]|[一二三四五六七八九十]{1,3}[、.]|[(（]\d{1,3}[)）])\s+|^\s*(?:\d{1,3}、|[一二三四五六七八九十]{1,3}、)/;

export function isBulletLine(line: string): boolean {
  return BULLET.test(line);
}

// ICU breaks after "Dr." before a capital; these abbreviations (and single initials) rarely end a
// sentence, so a break after them is undone.
const ABBREVIATION =
  /(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|e\.g|i\.e|Fig|Figs|Eq|No|cf|al|approx|[A-Z])\.$/;

/** Blocks: paragraphs split on blank lines, with each bullet line a block of its own. */
export function splitBlocks(text: string): Array<{ text: string; bullet: boolean }> {
  const blocks: Array<{ text: string; bullet: boolean }> = [];
  for (const paragraph of text.split(/\n[ \t\r\f\v]*\n/)) {
    let prose: string[] = [];
    const flush = () => {
      const joined = prose.join('\n').trim();
      if (joined) blocks.push({ text: joined, bullet: false });
      prose = [];
    };
    for (const line of paragraph.split('\n')) {
      if (isBulletLine(line)) {
        flush();
        if (line.trim()) blocks.push({ text: line.trim(), bullet: true });
      } else prose.push(line);
    }
    flush();
  }
  return blocks;
}

export function splitSentences(text: string, language: Language = detectLanguage(text)): Sentence[] {
  const out: Sentence[] = [];
  splitBlocks(text).forEach((block, blockIndex) => {
    const parts: string[] = [];
    for (const segment of sentenceTexts(block.text, language)) {
      const trimmed = segment.trim();
      if (!trimmed) continue;
      const last = parts.length - 1;
      if (last >= 0 && ABBREVIATION.test(parts[last]!)) parts[last] = `${parts[last]} ${trimmed}`;
      else parts.push(trimmed);
    }
    parts.forEach((p, i) => {
      out.push({ text: p, block: blockIndex, indexInBlock: i, bullet: block.bullet });
    });
  });
  return out;
}

const CJK_EDGE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u;

/** Joins sentences back into text: a newline between blocks; no space between CJK sentences. */
export function joinSentences(sentences: readonly Sentence[]): string {
  let out = '';
  let prev: Sentence | undefined;
  for (const s of sentences) {
    if (prev === undefined) out = s.text;
    else if (s.block !== prev.block) out += `\n${s.text}`;
    else {
      const cjk = CJK_EDGE.test(prev.text.slice(-1)) || CJK_EDGE.test(s.text.charAt(0));
      out += (cjk ? '' : ' ') + s.text;
    }
    prev = s;
  }
  return out;
}

// Scripts ICU segments by dictionary (no spaces between words): their runs still go to ICU.
const HAN_KANA =
  '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\u3031-\\u3035\\u309b\\u309c\\u30a0\\u30fc\\uff70';
const SOUTHEAST_ASIAN = '\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}';
const DICTIONARY = `[${HAN_KANA}${SOUTHEAST_ASIAN}]`;
const WORD_CHAR = `(?:(?!${DICTIONARY})[\\p{L}\\p{M}\\p{Nd}\\p{Nl}_])`;
// Elsewhere a word is what UAX #29 calls one in prose: letters, marks, digits and connector
// underscores, with an apostrophe or a period/comma between two of them (don't, e.g, 3.14, 1,234).
const WORD_OR_RUN = new RegExp(`(${DICTIONARY}+)|${WORD_CHAR}+(?:['’.,]${WORD_CHAR}+)*`, 'gu');

/**
 * Word-like segments, lowercased: ICU's dictionary words for Chinese, Japanese and Southeast Asian
 * runs, a regular expression elsewhere. Only summary scoring reads these; ICU's iterator over a
 * whole text costs ~1 µs a segment (spaces and punctuation included), which made it most of
 * planning protocol 002's example, while space-separated words need no dictionary.
 */
export function wordsOf(text: string, language: Language): string[] {
  const words: string[] = [];
  WORD_OR_RUN.lastIndex = 0;
  for (let m = WORD_OR_RUN.exec(text); m !== null; m = WORD_OR_RUN.exec(text)) {
    if (m[1] !== undefined) {
      for (const s of segmentsOf(m[1], language, 'word'))
        if (s.isWordLike) words.push(s.segment.toLowerCase());
    } else words.push(m[0].toLowerCase());
  }
  return words;
}

// A word as in WORD_OR_RUN, a run of horizontal whitespace (ICU keeps one together), CR LF, or any
// other single code point.
const PIECE_OR_RUN = new RegExp(
  `(${DICTIONARY}+)|${WORD_CHAR}+(?:['’.,]${WORD_CHAR}+)*|[ \\t]+|\\r\\n|[^]`,
  'gu',
);

/**
 * All segments of a text at word granularity, spaces and punctuation included (for exact cuts: they
 * join back to the text). ICU's dictionary words for Chinese, Japanese and Southeast Asian runs, a
 * regular expression elsewhere (ICU's iterator cost ~1 µs a segment, most of cutting a sentence).
 */
export function wordPieces(text: string, language: Language): string[] {
  const pieces: string[] = [];
  PIECE_OR_RUN.lastIndex = 0;
  for (let m = PIECE_OR_RUN.exec(text); m !== null; m = PIECE_OR_RUN.exec(text)) {
    if (m[1] !== undefined) for (const s of segmentsOf(m[1], language, 'word')) pieces.push(s.segment);
    else pieces.push(m[0]);
  }
  return pieces;
}

const TERM_OR_RUN = new RegExp(
  `([${HAN_KANA}]+)|([${SOUTHEAST_ASIAN}]+)|${WORD_CHAR}+(?:['’.,]${WORD_CHAR}+)*`,
  'gu',
);

/**
 * Terms for scoring sentences by frequency (summaries), lowercased: words as `wordsOf` gives them,
 * except that Chinese and Japanese runs become overlapping character bigrams of the stretches
 * between `breaks` (single-character function words such as 的, 了), a stretch of one character
 * that character. Bigrams are the usual index terms of Chinese retrieval and need no dictionary:
 * ICU's dictionary segmentation was most of the time spent planning protocol 002's example.
 * The matches of TERM_OR_RUN, found by a loop over char codes with each BMP character's class
 * looked up once (the regular expression's per-character lookahead was a fifth of scoring); from a
 * surrogate or a Southeast Asian letter on, the regular expression itself decides the match.
 */
export function termsOf(text: string, language: Language, breaks: ReadonlySet<string>): string[] {
  const terms: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const k = termKind(text.charCodeAt(i));
    if (k === T_NONE || k === T_JOIN) {
      i++;
      continue;
    }
    const j = k === T_HAN_KANA ? runEnd(text, i) : k === T_WORD ? wordEnd(text, i) : -1;
    if (j >= 0) {
      if (k === T_HAN_KANA) bigrams(text.slice(i, j), breaks, terms);
      else terms.push(text.slice(i, j).toLowerCase());
      i = j;
      continue;
    }
    TERM_OR_RUN.lastIndex = i;
    const m = TERM_OR_RUN.exec(text);
    if (m === null) break;
    if (m[1] !== undefined) bigrams(m[1], breaks, terms);
    else if (m[2] !== undefined) {
      for (const s of segmentsOf(m[2], language, 'word')) if (s.isWordLike) terms.push(s.segment);
    } else terms.push(m[0].toLowerCase());
    i = TERM_OR_RUN.lastIndex;
  }
  return terms;
}

const T_NONE = 1;
const T_WORD = 2;
/** ' ’ . , — inside a word between two word characters. */
const T_JOIN = 3;
const T_HAN_KANA = 4;
/** Southeast Asian letters, surrogates: left to the regular expression. */
const T_OTHER = 5;
const HAN_KANA_ONE = new RegExp(`^[${HAN_KANA}]$`, 'u');
const SOUTHEAST_ASIAN_ONE = new RegExp(`^[${SOUTHEAST_ASIAN}]$`, 'u');
const WORD_ONE = new RegExp(`^${WORD_CHAR}$`, 'u');
/** Per BMP code unit: 0 unknown, else its T_ class, filled in on first sight. */
const termKinds = new Uint8Array(0x10000);

function termKind(c: number): number {
  let k = termKinds[c]!;
  if (k === 0) {
    const s = String.fromCharCode(c);
    k =
      c >= 0xd800 && c <= 0xdfff
        ? T_OTHER
        : c === 0x27 || c === 0x2019 || c === 0x2e || c === 0x2c
          ? T_JOIN
          : HAN_KANA_ONE.test(s)
            ? T_HAN_KANA
            : SOUTHEAST_ASIAN_ONE.test(s)
              ? T_OTHER
              : WORD_ONE.test(s)
                ? T_WORD
                : T_NONE;
    termKinds[c] = k;
  }
  return k;
}

/** End of the Han/kana run at `i`, or -1 when a surrogate (an astral ideograph?) follows it. */
function runEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && termKind(text.charCodeAt(j)) === T_HAN_KANA) j++;
  return j < text.length && termKind(text.charCodeAt(j)) === T_OTHER ? -1 : j;
}

/** End of the word at `i` (joined through ' ’ . , between word characters), or -1 if undecided. */
function wordEnd(text: string, i: number): number {
  const n = text.length;
  let j = i + 1;
  for (;;) {
    while (j < n && termKind(text.charCodeAt(j)) === T_WORD) j++;
    if (j >= n) return j;
    const at = termKind(text.charCodeAt(j));
    if (at === T_OTHER) return -1;
    if (at !== T_JOIN || j + 1 >= n) return j;
    const after = termKind(text.charCodeAt(j + 1));
    if (after === T_OTHER) return -1;
    if (after !== T_WORD) return j;
    j += 2;
  }
}

function bigrams(run: string, breaks: ReadonlySet<string>, out: string[]): void {
  let prev = '';
  let single = true;
  const end = () => {
    if (prev !== '' && single) out.push(prev);
    prev = '';
    single = true;
  };
  for (let i = 0; i < run.length; ) {
    const size = run.codePointAt(i)! > 0xffff ? 2 : 1;
    const char = size === 1 ? run[i]! : run.slice(i, i + 2);
    i += size;
    if (breaks.has(char)) {
      end();
      continue;
    }
    if (prev !== '') {
      out.push(prev + char);
      single = false;
    }
    prev = char;
  }
  end();
}
