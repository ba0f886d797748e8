import { describe, expect, it } from 'vitest';
import { wordsOf } from './split-text.ts';

/** ICU's word-like segments, lowercased: what wordsOf returned before it skipped ICU for prose. */
function icuWords(text: string, language: 'en' | 'zh'): string[] {
  const seg = new Intl.Segmenter(language, { granularity: 'word' });
  return [...seg.segment(text)].filter((s) => s.isWordLike).map((s) => s.segment.toLowerCase());
}

describe('wordsOf', () => {
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
  it('gives the words ICU gives on prose in Latin, Cyrillic, Chinese and Japanese', () => {
    for (const t of texts) {
      const language = /\p{Script=Han}/u.test(t) ? 'zh' : 'en';
      expect(wordsOf(t, language), t).toEqual(icuWords(t, language));
    }
  });
});
