import { beforeAll, describe, expect, it } from 'vitest';
import { loadEncoding, type TextTokenCounter } from './encodings.ts';
import { splitSentences } from './split-text.ts';
import {
  defaultSummaryRatio,
  extractiveSummary,
  keyPointsSummary,
  type Summarizer,
  summarizeText,
  truncateText,
} from './summarize-text.ts';

let count: TextTokenCounter;
beforeAll(async () => {
  count = await loadEncoding('o200k_base');
});

const EN = [
  'The Transformer replaces recurrence with self-attention over the whole sequence.',
  'Self-attention lets every position attend to every other position in one step.',
  'Because attention has no sequential dependency, training runs in parallel on GPUs.',
  'The cafeteria served soup on Tuesday.',
  '',
  'On translation benchmarks, the attention model reached 28.4 BLEU, beating recurrent baselines.',
  'Dr. Vaswani noted that attention cost grows with the square of the sequence length.',
  'Multi-head attention lets the model attend to several representation subspaces.',
]
  .join(' ')
  .replace('  ', '\n\n');

const ZH = [
  'Transformer架构完全基于注意力机制，摒弃了循环和卷积结构。自注意力机制允许模型在序列的所有位置之间直接建立联系。',
  '这种注意力设计使得模型训练可以高度并行化，大大缩短了训练时间。今天食堂的午饭很好吃。',
  '',
  '在机器翻译任务上，注意力模型取得了当时最好的结果，达到28.4的BLEU分数。注意力机制的计算复杂度与序列长度的平方成正比。',
  '- 多头注意力让模型关注不同的表示子空间。',
  '- 位置编码为注意力模型提供序列顺序信息。',
].join('\n');

const sentencesOf = (text: string) => splitSentences(text).map((s) => s.text);

describe.each([
  ['English', () => EN, 'cafeteria'],
  ['Chinese', () => ZH, '食堂'],
])('extractive summary of %s text', (_lang, text, offTopic) => {
  it('fits the budget, keeps whole original sentences in their order, and skips the off-topic one', () => {
    for (const budget of [20, 40, 60, 90]) {
      const s = extractiveSummary(text(), budget, count);
      expect(count(s.text)).toBeLessThanOrEqual(budget);
      const original = sentencesOf(text());
      const kept = sentencesOf(s.text);
      expect(kept.length).toBe(s.keptSentences);
      const positions = kept.map((k) => original.indexOf(k));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      expect(s.text).not.toContain(offTopic);
    }
  });

  it('returns the text unchanged when it already fits', () => {
    const s = extractiveSummary(text(), 10_000, count);
    expect(s.text).toBe(text());
    expect(s.keptSentences).toBe(s.totalSentences);
  });
});

describe('sentence splitting', () => {
  it('does not end a sentence after a title abbreviation', () => {
    expect(sentencesOf(EN)).toContain(
      'Dr. Vaswani noted that attention cost grows with the square of the sequence length.',
    );
  });

  it('splits a long run of text the same way it splits each of its sentences', () => {
    const en = Array.from({ length: 400 }, (_, i) => `Sentence ${i} has a value of ${i}.5 units.`).join(' ');
    const zh = Array.from({ length: 400 }, (_, i) => `第${i}句话说明注意力机制。`).join('');
    expect(sentencesOf(en)).toEqual(
      Array.from({ length: 400 }, (_, i) => `Sentence ${i} has a value of ${i}.5 units.`),
    );
    expect(sentencesOf(zh)).toEqual(Array.from({ length: 400 }, (_, i) => `第${i}句话说明注意力机制。`));
  });

  it('splits Chinese on 。！？ and treats bullet lines as their own blocks', () => {
    const s = splitSentences(ZH);
    expect(s[0]?.text).toBe('Transformer架构完全基于注意力机制，摒弃了循环和卷积结构。');
    expect(s.filter((x) => x.bullet).map((x) => x.text)).toEqual([
      '- 多头注意力让模型关注不同的表示子空间。',
      '- 位置编码为注意力模型提供序列顺序信息。',
    ]);
  });
});

describe('key points', () => {
  it('keeps only paragraph leads and bullet lines', () => {
    const s = keyPointsSummary(ZH, 80, count);
    const leads = splitSentences(ZH)
      .filter((x) => x.indexInBlock === 0 || x.bullet)
      .map((x) => x.text);
    expect(s.keptSentences).toBeGreaterThan(0);
    for (const kept of sentencesOf(s.text)) expect(leads).toContain(kept);
    expect(count(s.text)).toBeLessThanOrEqual(80);
  });
});

describe('truncate', () => {
  it('cuts on a sentence boundary and marks the cut', () => {
    const s = truncateText(EN, 40, count);
    expect(count(s.text)).toBeLessThanOrEqual(40);
    expect(s.text.endsWith(' …')).toBe(true);
    const body = s.text.slice(0, -2);
    expect(EN.startsWith(body)).toBe(true);
    expect(body.endsWith('.')).toBe(true);
  });

  it('falls back to a word boundary when the next sentence would waste the budget', () => {
    const long = `${'attention '.repeat(200)}ends here.`;
    const s = truncateText(long, 30, count);
    expect(count(s.text)).toBeLessThanOrEqual(30);
    expect(s.text).toMatch(/^(attention )+attention …$/);
  });

  it('cuts Chinese without spaces and an unbroken run by characters', () => {
    const zh = truncateText(ZH, 25, count);
    expect(count(zh.text)).toBeLessThanOrEqual(25);
    expect(zh.text.endsWith('…')).toBe(true);
    const run = truncateText('x'.repeat(5000), 10, count);
    expect(count(run.text)).toBeLessThanOrEqual(10);
    expect(run.text).toMatch(/^x+ …$/);
  });
});

describe('abstractive', () => {
  it('calls the summarizer with the budget, language and signal, and cuts an overlong answer', async () => {
    const seen: Array<Parameters<Summarizer>[1]> = [];
    const summarizer: Summarizer = async (_text, options) => {
      seen.push(options);
      return '注意力机制让模型并行训练。'.repeat(20);
    };
    const signal = new AbortController().signal;
    const s = await summarizeText(ZH, { strategy: 'abstractive', maxTokens: 30, count, summarizer, signal });
    expect(seen).toEqual([{ maxTokens: 30, language: 'zh', signal }]);
    expect(s.strategy).toBe('abstractive');
    expect(count(s.text)).toBeLessThanOrEqual(30);
    expect(s.fallback).toBeUndefined();
  });

  it('falls back to extractive, saying why, without a summarizer or when it fails', async () => {
    const none = await summarizeText(EN, { strategy: 'abstractive', maxTokens: 40, count });
    expect(none).toMatchObject({
      strategy: 'extractive',
      fallback: { requested: 'abstractive', reason: 'no summarizer configured' },
    });
    const failing: Summarizer = async () => {
      throw new Error('rate limited');
    };
    const failed = await summarizeText(EN, {
      strategy: 'abstractive',
      maxTokens: 40,
      count,
      summarizer: failing,
    });
    expect(failed.fallback?.reason).toBe('summarizer failed: rate limited');
    expect(count(failed.text)).toBeLessThanOrEqual(40);
  });

  it('propagates cancellation instead of falling back', async () => {
    const ac = new AbortController();
    const summarizer: Summarizer = async (_t, { signal }) => {
      ac.abort(new Error('cancelled'));
      throw signal?.reason;
    };
    await expect(
      summarizeText(EN, { strategy: 'abstractive', maxTokens: 40, count, summarizer, signal: ac.signal }),
    ).rejects.toThrow('cancelled');
  });
});

describe('strategy ratios', () => {
  it('aims at the middle of each protocol range', () => {
    expect(defaultSummaryRatio('extractive')).toBe(0.3);
    expect(defaultSummaryRatio('abstractive')).toBe(0.2);
    expect(defaultSummaryRatio('key_points')).toBe(0.15);
  });
});
