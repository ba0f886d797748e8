import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectLanguage, termsOf, wordPieces, wordsOf } from './split-text.ts';

describe('detectLanguage', () => {
  // The rule as first written: one match per letter (every letter a string in an array).
  const reference = (text: string) => {
    const letters = text.match(/\p{L}/gu)?.length ?? 0;
    if (letters === 0) return 'en';
    return (text.match(/\p{Script=Han}/gu)?.length ?? 0) / letters >= 0.3 ? 'zh' : 'en';
  };
  const char = fc.constantFrom(
    'a',
    'Z',
    ' ',
    '1',
    '.',
    '中',
    '文',
    '𠀀',
    '𝒜',
    'é',
    'ー',
    'あ',
    '\ud800',
    '\udc00',
  );

  it('counts letters and Han characters by code point, as the one-match-per-letter rule did', () => {
    fc.assert(
      fc.property(fc.array(char, { maxLength: 60 }), (chars) => {
        const text = chars.join('');
        expect(detectLanguage(text)).toBe(reference(text));
      }),
      { numRuns: 3000 },
    );
    expect(detectLanguage('注意力机制 attention')).toBe('zh');
    expect(detectLanguage('attention is all you need 注')).toBe('en');
  });
});

/** ICU's word-like segments, lowercased: what wordsOf returned before it skipped ICU for prose. */
function icuWords(text: string, language: 'en' | 'zh'): string[] {
  const seg = new Intl.Segmenter(language, { granularity: 'word' });
  return [...seg.segment(text)].filter((s) => s.isWordLike).map((s) => s.segment.toLowerCase());
}

const texts = [
  "Don't panic: e.g. 3.14 and 1,234 items — the well-known foo_bar isn't new.",
  'The scheduler retries each step with a growing timeout (30 s, then 60 s), then hands back partial results!',
  'Ünïcödé naïve résumé façade Ångström; Straße coöperate.',
  'Модель обрабатывает длинные документы по частям, шаг за шагом.',
  'Self-attention lets every position attend to all others; O(n²) memory, 12.5% faster on v2.',
  '注意力机制允许模型在序列的所有位置之间直接建立联系，从而实现高效的并行计算。',
  'Mixed 中文 and English: abc中文 x2 数据库查询结果 v1.2.3 🚀 done.',
  'トークン数を正確に数えることが重要です。',
];

describe('wordsOf', () => {
  it('gives the words ICU gives on prose in Latin, Cyrillic, Chinese and Japanese', () => {
    for (const t of texts) {
      const language = /\p{Script=Han}/u.test(t) ? 'zh' : 'en';
      expect(wordsOf(t, language), t).toEqual(icuWords(t, language));
    }
  });
});

describe('termsOf', () => {
  const breaks = new Set(['的', '了']);
  it('gives Chinese runs as bigrams of the stretches between function words, other words as wordsOf', () => {
    expect(termsOf('注意力机制的计算 Self-attention, v1.2', 'zh', breaks)).toEqual([
      '注意',
      '意力',
      '力机',
      '机制',
      '计算',
      'self',
      'attention',
      'v1.2',
    ]);
    // A stretch of one character is that character; a surrogate pair is one character.
    expect(termsOf('好了𠀀中', 'zh', breaks)).toEqual(['好', '𠀀中']);
  });

  it('gives the same terms as wordsOf where no Chinese or Japanese run occurs', () => {
    for (const t of texts.filter((x) => !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(x)))
      expect(termsOf(t, 'en', breaks), t).toEqual(wordsOf(t, 'en'));
  });

  it('finds the regular expression’s matches on strings of any script (the char-code loop is exact)', () => {
    // The matches termsOf's loop stands for, as the regular expression alone finds them.
    const hanKana =
      '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\u3031-\\u3035\\u309b\\u309c\\u30a0\\u30fc\\uff70';
    const sea = '\\p{Script=Thai}\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}';
    const word = `(?:(?![${hanKana}${sea}])[\\p{L}\\p{M}\\p{Nd}\\p{Nl}_])`;
    const re = new RegExp(`([${hanKana}]+)|([${sea}]+)|${word}+(?:['’.,]${word}+)*`, 'gu');
    const reference = (text: string) => {
      const out: string[] = [];
      for (const m of text.matchAll(re))
        if (m[1] !== undefined) out.push(...termsOf(m[1], 'zh', breaks));
        else if (m[2] !== undefined) out.push(...termsOf(m[2], 'en', breaks));
        else out.push(m[0].toLowerCase());
      return out;
    };
    const parts = [..."aBz9_ .,'’-中文的ひカーｰกขé\u0301ßİⅫ٣—。\n", '𠀀', '😀', '\ud800', 'x.y', 'ä'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...parts), { maxLength: 14 }), (a) => {
        const text = a.join('');
        expect(termsOf(text, 'zh', breaks), JSON.stringify(text)).toEqual(reference(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('wordPieces', () => {
  it("gives ICU's word segments, spaces and punctuation included, and joins back to the text", () => {
    for (const t of [...texts, 'two  spaces\tand\ttabs\nnew line\r\nCRLF end']) {
      const language = /\p{Script=Han}/u.test(t) ? 'zh' : 'en';
      const icu = [...new Intl.Segmenter(language, { granularity: 'word' }).segment(t)].map((s) => s.segment);
      expect(wordPieces(t, language), t).toEqual(icu);
    }
  });
});
