/**
 * The researchers' real work on text: split sentences, pick out claims and score how strongly the
 * text supports them, find keywords, spot gaps and pain points. Small and deterministic.
 */

export interface CorpusItem {
  id: string;
  title: string;
  text: string;
}

export interface Claim {
  source: string;
  item: string;
  text: string;
  score: number;
  kind: 'claim' | 'gap' | 'pain_point';
}

export interface ItemAnalysis {
  item: string;
  claims: Claim[];
  keywords: string[];
}

const STOP = new Set(
  'a an and are as at be been but by can did does each for from had has have how i in into is it its itself may more most must need no not of on one or our out over per should so some such than that the their them then there these they this those through to too under up very was we were what when where which while who why will with within would you your also about after before only just like any all both much many less fewer once well even'.split(
    ' ',
  ),
);
const CLAIM_MARKERS =
  /\b(we (show|find|present|argue)|results? (indicate|show)|reduced|raised|improved|recovered|eliminated|completed|preferred|correlate|prevents?|cut)\b/i;
const HEDGES = /\b(may|might|could|it may be|suggests?|we did not measure|perhaps)\b/i;
const GAP =
  /\b(no built-in|no support|does not|must be implemented|no concurrency|not plan|only understands)\b/i;
const PAIN =
  /\b(need|want|cannot|can't|keeps?|dies|fails?|wrong|overkill|blows past|worse|twice|nothing to show|too noisy)\b/i;

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });
const words = new Intl.Segmenter('en', { granularity: 'word' });

export function splitSentences(text: string): string[] {
  return [...sentences.segment(text)].map((s) => s.segment.trim()).filter((s) => s.length > 0);
}

export function tokens(text: string): string[] {
  return [...words.segment(text.toLowerCase())]
    .filter((w) => w.isWordLike && w.segment.length >= 4 && !STOP.has(w.segment) && !/^\d/.test(w.segment))
    .map((w) => w.segment);
}

/** How strongly a sentence states something: evidence words and numbers up, hedges down. */
export function scoreSentence(sentence: string): number {
  let score = 0.45;
  if (CLAIM_MARKERS.test(sentence)) score += 0.2;
  if (/\d/.test(sentence)) score += 0.2;
  if (/%/.test(sentence)) score += 0.05;
  if (HEDGES.test(sentence)) score -= 0.3;
  return Math.round(Math.min(1, Math.max(0, score)) * 100) / 100;
}

export function topKeywords(text: string, n = 5): string[] {
  const counts = new Map<string, number>();
  for (const t of tokens(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, n)
    .map(([w]) => w);
}

export function analyzeItem(item: CorpusItem, source: string): ItemAnalysis {
  const claims: Claim[] = [];
  for (const s of splitSentences(item.text)) {
    if (source === 'discussions') {
      if (PAIN.test(s))
        claims.push({ source, item: item.id, text: s, score: scoreSentence(s), kind: 'pain_point' });
    } else if (GAP.test(s))
      claims.push({ source, item: item.id, text: s, score: scoreSentence(s), kind: 'gap' });
    else if (CLAIM_MARKERS.test(s) || /\d/.test(s))
      claims.push({ source, item: item.id, text: s, score: scoreSentence(s), kind: 'claim' });
  }
  return { item: item.id, claims, keywords: topKeywords(`${item.title} ${item.text}`) };
}

/** Themes: keywords that several sources talk about, strongest first. */
export function sharedThemes(
  bySource: Record<string, string[]>,
  min = 2,
): Array<{ keyword: string; sources: string[] }> {
  const where = new Map<string, Set<string>>();
  for (const [source, kws] of Object.entries(bySource))
    for (const k of kws) where.set(k, (where.get(k) ?? new Set()).add(source));
  return [...where.entries()]
    .filter(([, s]) => s.size >= min)
    .map(([keyword, s]) => ({ keyword, sources: [...s].sort() }))
    .sort((a, b) => b.sources.length - a.sources.length || a.keyword.localeCompare(b.keyword));
}

/** Pairs each pain point with the claim that answers it best (most shared keywords). */
export function matchPainToEvidence(
  pains: Claim[],
  claims: Claim[],
): Array<{ pain: string; evidence: string; overlap: string[] }> {
  const out: Array<{ pain: string; evidence: string; overlap: string[] }> = [];
  for (const p of pains) {
    const pt = new Set(tokens(p.text));
    let best: { c: Claim; overlap: string[] } | undefined;
    for (const c of claims) {
      const overlap = [...new Set(tokens(c.text))].filter((t) => pt.has(t));
      if (overlap.length > (best?.overlap.length ?? 0)) best = { c, overlap };
    }
    if (best && best.overlap.length >= 2)
      out.push({ pain: p.text, evidence: best.c.text, overlap: best.overlap });
  }
  return out;
}
