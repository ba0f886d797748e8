import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { O200kPieces } from './o200k-pieces.ts';

const pieces = new O200kPieces(O200K_TOKEN_SPLIT_REGEX);
const regex = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');

function split(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const end = pieces.end(text, i);
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

// Every ASCII character, and the non-ASCII ones next to which the hand-written path must defer:
// letters of each case class, combining marks, other numbers, Unicode spaces, CJK text and
// punctuation, a curly apostrophe, emoji (surrogate pairs) and lone surrogates.
const ASCII = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
const OTHERS = [
  'é',
  'É',
  'ß',
  'ǅ',
  'ʰ',
  'ª',
  '\u0301',
  '\u0903',
  '²',
  '٣',
  'Ⅻ',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\u2028',
  '\u0085',
  '中',
  '文',
  '，',
  '。',
  '’',
  'ー',
  'ก',
  '🚀',
  '👩\u200d💻',
  '\ud800',
  '\udc00',
  '\ufeff',
  '\u200b',
];
const WORDS = [
  "'s",
  "'LL",
  "'ve",
  "'Re",
  "'d",
  'the',
  'The',
  'THE',
  'don',
  '123',
  '4567',
  ' \n',
  '\r\n',
  '  ',
  '//',
  '...',
];
const char = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ASCII) },
  { weight: 3, arbitrary: fc.constantFrom(...OTHERS) },
  { weight: 3, arbitrary: fc.constantFrom(...WORDS) },
);
const text = fc.array(char, { maxLength: 40 }).map((a) => a.join(''));

describe('o200k pre-tokenization by hand', () => {
  it('gives the split regex’s pieces on generated strings', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(split(t)).toEqual(t.match(regex) ?? []);
      }),
      { numRuns: 20_000 },
    );
  });

  it('gives the split regex’s pieces on every pair of ASCII characters, and triples', () => {
    // Triples over one character of each class the hand-written path tells apart.
    const third = [
      'a',
      'A',
      's',
      'l',
      'e',
      ' ',
      '\t',
      '\n',
      '\r',
      "'",
      '/',
      '.',
      '1',
      'é',
      '中',
      '\u0301',
      '\u00a0',
    ];
    for (const a of ASCII)
      for (const b of ASCII) {
        expect(split(a + b)).toEqual((a + b).match(regex));
        if (a.charCodeAt(0) % 8 === 0 || third.includes(a))
          for (const c of third) expect(split(a + b + c)).toEqual((a + b + c).match(regex));
      }
  });
});
