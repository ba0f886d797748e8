/**
 * Text summaries under a token budget, for English and Chinese:
 * - `extractive`: sentences scored by term frequency (content words; character bigrams for
 *   Chinese, split at function words; stop words dropped), with a bonus for the first sentence of the text and of each
 *   paragraph and a penalty for fragments; near-duplicates are skipped; chosen sentences keep their
 *   original order. No npm TextRank handles Chinese, and TF scoring is O(n) where TextRank is O(n²).
 * - `key_points`: the same scorer restricted to the lead sentence of each paragraph and bullet lines.
 * - `truncate`: the longest prefix ending on a sentence boundary, or on a word boundary when that
 *   would waste more than 30% of the budget, followed by an ellipsis marker.
 * - `abstractive`: a pluggable summarizer (an LLM); without one, or if it fails, extractive, and the
 *   result says so. Its output is cut to the budget if it overshoots.
 * Every result fits `maxTokens` as counted by the given counter.
 */

import { countUpTo, fitsIn, type TextTokenCounter } from './encodings.ts';
import {
  detectLanguage,
  joinSentences,
  type Language,
  type Sentence,
  splitSentences,
  termsOf,
  wordPieces,
} from './split-text.ts';

export const SummaryStrategies = ['extractive', 'abstractive', 'key_points', 'truncate'] as const;
export type SummaryStrategy = (typeof SummaryStrategies)[number];

/** Protocol 002 §4.2 compression ratios; `truncate` is configurable, so it has none. */
export const STRATEGY_RATIOS: Readonly<Record<SummaryStrategy, { min: number; max: number } | null>> = {
  extractive: { min: 0.2, max: 0.4 },
  abstractive: { min: 0.1, max: 0.3 },
  key_points: { min: 0.1, max: 0.2 },
  truncate: null,
};

/** The ratio a strategy aims at when none is configured: the middle of its protocol range. */
export function defaultSummaryRatio(strategy: SummaryStrategy): number {
  const r = STRATEGY_RATIOS[strategy];
  return r === null ? 0.3 : Math.round(((r.min + r.max) / 2) * 100) / 100;
}

/** An abstractive summarizer, typically an LLM call. It should honour `signal`. */
export type Summarizer = (
  text: string,
  options: { maxTokens: number; language: Language; signal?: AbortSignal | undefined },
) => Promise<string>;

export interface TextSummary {
  text: string;
  /** The strategy that produced `text` (extractive when abstractive fell back). */
  strategy: SummaryStrategy;
  totalSentences: number;
  keptSentences: number;
  /** Set when the requested strategy could not be used. */
  fallback?: { requested: SummaryStrategy; reason: string };
}

export interface SummarizeTextOptions {
  strategy: SummaryStrategy;
  maxTokens: number;
  count: TextTokenCounter;
  summarizer?: Summarizer | undefined;
  signal?: AbortSignal | undefined;
  /** Favour sentences with numbers (chart descriptions: "保留关键数据点"). @default false */
  numericBonus?: boolean;
  /** Marker appended to cut text. @default '…' */
  ellipsis?: string;
}

const EN_STOP = new Set(
  'a an the and or but if of to in on at by for with from as is are was were be been being it its this that these those there here we you he she they i me my our your his her their them us not no so than then too very can could will would shall should may might must do does did done have has had having into over under about after before between through during out up down also such which who whom whose what when where why how all any both each few more most other some only own same just'.split(
    ' ',
  ),
);
const ZH_STOP = new Set(
  '的 了 是 在 和 与 及 或 也 就 都 而 但 并 对 把 被 让 从 到 为 以 于 之 其 这 那 这些 那些 一个 我们 你们 他们 它们 我 你 他 她 它 有 没有 不 很 更 最 又 再 还 等 着 过 吗 呢 吧 啊 所 该 此 每 各'.split(
    ' ',
  ),
);

/** Chinese function words of one character: a bigram never spans one (termsOf). */
const ZH_BREAKS: ReadonlySet<string> = new Set([...ZH_STOP].filter((w) => w.length === 1));

interface Scored {
  index: number;
  sentence: Sentence;
  /** Its distinct content terms, as ids of the text's terms, in order of first occurrence. */
  terms: number[];
  score: number;
}

/**
 * Term-frequency scores. Each distinct term of the text gets an id on first sight (stop words none),
 * so an occurrence costs one map lookup and a sentence's terms are a list of ids; the sums run over
 * the same terms in the same order as with a set of words per sentence.
 */
function scoreSentences(sentences: readonly Sentence[], language: Language, numericBonus: boolean): Scored[] {
  const ids = new Map<string, number>();
  const tf: number[] = [];
  const bags = sentences.map((s) => {
    const bag: number[] = [];
    for (const w of termsOf(s.text, language, ZH_BREAKS)) {
      let id = ids.get(w);
      if (id === undefined) {
        id = EN_STOP.has(w) || ZH_STOP.has(w) ? -1 : tf.push(0) - 1;
        ids.set(w, id);
      }
      if (id >= 0) {
        bag.push(id);
        tf[id]!++;
      }
    }
    return bag;
  });
  let maxTf = 1;
  for (const n of tf) if (n > maxTf) maxTf = n;
  // Luhn's "significant words": in a text of some length, a word seen once says nothing about its
  // themes. A small base keeps the position bonuses meaningful when no word repeats.
  const minTf = sentences.length >= 5 ? 2 : 1;
  const seenIn = new Int32Array(tf.length).fill(-1);
  return sentences.map((sentence, index) => {
    const terms: number[] = [];
    let sum = 0;
    for (const id of bags[index]!) {
      if (seenIn[id] === index) continue;
      seenIn[id] = index;
      terms.push(id);
      const n = tf[id]!;
      if (n >= minTf) sum += n / maxTf;
    }
    let score = 0.05 + (terms.length === 0 ? 0 : sum / Math.sqrt(terms.length));
    if (index === 0) score *= 1.25;
    else if (sentence.indexInBlock === 0) score *= 1.15;
    if (terms.length < 3) score *= 0.5;
    if (numericBonus && /\d/.test(sentence.text)) score *= 1.3;
    return { index, sentence, terms, score };
  });
}

function jaccard(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.includes(w)) shared++;
  return shared / (a.length + b.length - shared);
}

/** Picks by score under the budget, then restores document order; drops picks until it really fits. */
function pick(candidates: Scored[], maxTokens: number, count: TextTokenCounter): Scored[] {
  const ranked = [...candidates].sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen: Scored[] = [];
  let used = 0;
  // Filling the budget with sentences that share nothing with the text's themes only adds noise.
  const floor = (ranked[0]?.score ?? 0) * 0.3;
  for (const c of ranked) {
    if (c.score < floor) break;
    // Only whether it fits matters, so counting stops past the room left.
    const t = countUpTo(count, c.sentence.text, maxTokens - used);
    if (used + t > maxTokens) continue;
    if (chosen.some((s) => jaccard(s.terms, c.terms) > 0.6)) continue;
    chosen.push(c);
    used += t;
  }
  chosen.sort((a, b) => a.index - b.index);
  // Joining adds separators and can merge tokens differently; remove the weakest until it fits.
  while (chosen.length > 0 && !fitsIn(count, joinSentences(chosen.map((c) => c.sentence)), maxTokens)) {
    let weakest = 0;
    for (let i = 1; i < chosen.length; i++) if (chosen[i]!.score < chosen[weakest]!.score) weakest = i;
    chosen.splice(weakest, 1);
  }
  return chosen;
}

function selectSummary(
  text: string,
  maxTokens: number,
  count: TextTokenCounter,
  strategy: 'extractive' | 'key_points',
  options: { numericBonus?: boolean | undefined; ellipsis?: string | undefined },
): TextSummary {
  const language = detectLanguage(text);
  const sentences = splitSentences(text, language);
  const base = { strategy, totalSentences: sentences.length };
  if (fitsIn(count, text, maxTokens)) return { ...base, text, keptSentences: sentences.length };
  const scored = scoreSentences(sentences, language, options.numericBonus ?? false);
  const candidates =
    strategy === 'key_points'
      ? scored.filter((s) => s.sentence.indexInBlock === 0 || s.sentence.bullet)
      : scored;
  const chosen = pick(candidates, maxTokens, count);
  if (chosen.length > 0)
    return { ...base, text: joinSentences(chosen.map((c) => c.sentence)), keptSentences: chosen.length };
  // Even the best sentence is too long: cut it.
  const best = [...candidates].sort((a, b) => b.score - a.score || a.index - b.index)[0];
  if (!best) return { ...base, text: '', keptSentences: 0 };
  // It is one sentence already: cut it as such rather than splitting its text again.
  const cut = truncateSentences(
    best.sentence.text,
    [best.sentence],
    detectLanguage(best.sentence.text),
    maxTokens,
    count,
    options.ellipsis,
  );
  return { ...base, text: cut.text, keptSentences: cut.text ? 1 : 0 };
}

export function extractiveSummary(
  text: string,
  maxTokens: number,
  count: TextTokenCounter,
  options: { numericBonus?: boolean; ellipsis?: string } = {},
): TextSummary {
  return selectSummary(text, maxTokens, count, 'extractive', options);
}

export function keyPointsSummary(text: string, maxTokens: number, count: TextTokenCounter): TextSummary {
  return selectSummary(text, maxTokens, count, 'key_points', {});
}

/** Largest k in [lo, hi] with ok(k), assuming ok is monotone and ok(lo) holds. */
function largest(lo: number, hi: number, ok: (k: number) => boolean): number {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (ok(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function truncateText(
  text: string,
  maxTokens: number,
  count: TextTokenCounter,
  ellipsis = '…',
): TextSummary {
  const language = detectLanguage(text);
  return truncateSentences(text, splitSentences(text, language), language, maxTokens, count, ellipsis);
}

/** truncateText over the text's sentences, split already. */
function truncateSentences(
  text: string,
  sentences: readonly Sentence[],
  language: Language,
  maxTokens: number,
  count: TextTokenCounter,
  ellipsis = '…',
): TextSummary {
  const base = { strategy: 'truncate' as const, totalSentences: sentences.length };
  if (fitsIn(count, text, maxTokens)) return { ...base, text, keptSentences: sentences.length };
  // Reserve room for the marker and the space that may precede it.
  const budget = maxTokens - count(` ${ellipsis}`);
  if (budget <= 0) return { ...base, text: '', keptSentences: 0 };
  const fits = (s: string) => fitsIn(count, s, budget);
  // Estimate the sentence prefix from per-sentence counts, then confirm with a real count.
  let k = 0;
  let estimate = 0;
  while (k < sentences.length) {
    const t = countUpTo(count, sentences[k]!.text, budget - estimate);
    if (estimate + t > budget) break;
    estimate += t;
    k++;
  }
  while (k > 0 && !fits(joinSentences(sentences.slice(0, k)))) k--;
  const prefix = joinSentences(sentences.slice(0, k));
  // The prefix fits (checked above), so its bounded count is its exact count.
  const prefixTokens = k === 0 ? 0 : countUpTo(count, prefix, budget);
  if (prefixTokens >= 0.7 * budget || k >= sentences.length)
    return { ...base, text: withEllipsis(prefix, ellipsis), keptSentences: k };
  // A sentence boundary would waste too much: fill with whole words of the next sentence.
  const next = sentences[k]!.text;
  const window = Math.max(64, (budget - prefixTokens) * 8);
  const pieces = wordPieces(next.slice(0, window), language);
  // The window may end inside a word; that last piece is not a whole word.
  if (next.length > window && pieces.length > 1) pieces.pop();
  const sep =
    k === 0 ? '' : sentences[k]!.block !== sentences[k - 1]!.block ? '\n' : language === 'zh' ? '' : ' ';
  const withPieces = (n: number) => (n === 0 ? prefix : prefix + sep + pieces.slice(0, n).join('').trimEnd());
  const n = largest(0, pieces.length, (m) => fits(withPieces(m)));
  let cut = withPieces(n);
  if (cut === '') {
    // One "word" longer than the budget (a hash, base64, an unbroken run): cut by code points.
    const chars = Array.from(pieces[0] ?? '');
    cut = chars
      .slice(
        0,
        largest(0, chars.length, (m) => fits(chars.slice(0, m).join(''))),
      )
      .join('');
  }
  return { ...base, text: withEllipsis(cut, ellipsis), keptSentences: k };
}

const CJK_END = /[\p{Script=Han}\u3000-\u303f\uff00-\uffef]$/u;

// A space keeps a Latin marker from gluing to the last word ("word …"); CJK text takes it directly.
function withEllipsis(text: string, ellipsis: string): string {
  if (text === '' || ellipsis === '') return text + ellipsis;
  return CJK_END.test(text) ? text + ellipsis : `${text} ${ellipsis}`;
}

/** Summarizes with the requested strategy; abstractive falls back to extractive and says why. */
export async function summarizeText(text: string, options: SummarizeTextOptions): Promise<TextSummary> {
  const { maxTokens, count } = options;
  switch (options.strategy) {
    case 'extractive':
      return extractiveSummary(text, maxTokens, count, {
        numericBonus: options.numericBonus ?? false,
        ...(options.ellipsis === undefined ? {} : { ellipsis: options.ellipsis }),
      });
    case 'key_points':
      return keyPointsSummary(text, maxTokens, count);
    case 'truncate':
      return truncateText(text, maxTokens, count, options.ellipsis);
    case 'abstractive':
      return abstractive(text, options);
  }
}

async function abstractive(text: string, options: SummarizeTextOptions): Promise<TextSummary> {
  const { maxTokens, count, summarizer, signal } = options;
  const fallback = (reason: string): TextSummary => ({
    ...extractiveSummary(text, maxTokens, count, { numericBonus: options.numericBonus ?? false }),
    fallback: { requested: 'abstractive', reason },
  });
  if (!summarizer) return fallback('no summarizer configured');
  const language = detectLanguage(text);
  const totalSentences = splitSentences(text, language).length;
  if (fitsIn(count, text, maxTokens))
    return { text, strategy: 'abstractive', totalSentences, keptSentences: totalSentences };
  let out: string;
  try {
    out = await summarizer(text, { maxTokens, language, signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    return fallback(`summarizer failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof out !== 'string') return fallback('summarizer returned a non-string');
  if (!fitsIn(count, out, maxTokens)) out = truncateText(out, maxTokens, count, options.ellipsis).text;
  return {
    text: out,
    strategy: 'abstractive',
    totalSentences,
    keptSentences: splitSentences(out, language).length,
  };
}
