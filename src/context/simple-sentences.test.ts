import { describe, expect, it } from 'vitest';
import { simpleSentences } from './simple-sentences.ts';
import { splitSentences } from './split-text.ts';

function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const icu = {
  en: new Intl.Segmenter('en', { granularity: 'sentence' }),
  zh: new Intl.Segmenter('zh', { granularity: 'sentence' }),
};

/** Strings of `parts` drawn from `alphabet`, each compared with ICU in both locales. */
function expectIcuOn(alphabet: readonly string[], seed: number, count: number, maxParts: number) {
  const next = random(seed);
  let compared = 0;
  for (let t = 0; t < count; t++) {
    const n = 1 + Math.floor(next() * maxParts);
    let text = '';
    for (let i = 0; i < n; i++) text += alphabet[Math.floor(next() * alphabet.length)];
    const ours = simpleSentences(text);
    if (ours === null) continue;
    compared++;
    for (const seg of [icu.en, icu.zh])
      expect(ours, JSON.stringify(text)).toEqual([...seg.segment(text)].map((s) => s.segment));
  }
  expect(compared).toBeGreaterThan(count / 2);
}

describe('sentences split by hand', () => {
  it('equal ICU on strings of single characters of the table (every rule, in any order)', () => {
    expectIcuOn([...'aAbZz09 . . ..!?,-:;"\'()[]#/%\n\t。！？，、：中文字。 eE'], 1, 20_000, 14);
  });

  it('equal ICU on prose-like strings: abbreviations, numbers, quotes, Chinese', () => {
    const parts = [
      'The',
      ' ',
      ' ',
      'e.g.',
      '3.5',
      'U.S.',
      'end.',
      '?',
      '!',
      '。',
      '中文',
      '"',
      '(',
      ')',
      '\n',
    ];
    parts.push(
      ',',
      'a',
      '...',
      '  ',
      'word',
      'Dr.',
      '！',
      '？',
      '，',
      ';',
      ':',
      '-',
      "'",
      '[',
      ']',
      '\t',
      '9',
      'X',
      '%',
    );
    expectIcuOn(parts, 2, 20_000, 16);
  });

  it('leave other characters to ICU', () => {
    expect(simpleSentences('Café. Next.')).toBeNull();
    expect(simpleSentences('Wait… what?')).toBeNull();
    expect(simpleSentences('“Quoted.” Next.')).toBeNull();
    expect(simpleSentences('One.\r\nTwo.')).toBeNull();
    expect(simpleSentences('Fine. Next one? Yes!')).toEqual(['Fine. ', 'Next one? ', 'Yes!']);
  });

  it('give splitSentences its sentences (abbreviations still merged after)', () => {
    const text = 'Dr. Smith arrived at 3.5 p.m. on Monday. 他说好。然后离开了。Was it e.g. late? Yes.';
    expect(simpleSentences(text)).not.toBeNull();
    expect(splitSentences(text).map((s) => s.text)).toEqual([
      'Dr. Smith arrived at 3.5 p.m. on Monday.',
      '他说好。',
      '然后离开了。',
      'Was it e.g. late?',
      'Yes.',
    ]);
  });
});
