/**
 * Summary transfer of a JSON value (protocol 002 §4.2). Records keep their `preserve_fields`, turn
 * each `summarize_fields` entry into `<field>_summary`, and drop the rest (named in
 * `omitted_fields`); each collection `X` becomes `X_summary` with `total_X` and `summarized_X`.
 * A top-level array is the collection `items`; a string becomes `text_summary`.
 *
 * The budget (`maxTokens`, over the compact JSON of `data`) is shared like this: every summarized
 * text aims at `ratio` of its tokens; if that does not fit, the texts shrink together down to a
 * quarter of their aim, and beyond that whole records are dropped, least important first (priority,
 * then later before earlier), so `summarized_X` < `total_X`. The result is counted for real and
 * records are dropped until it fits; texts are summarized once (an LLM is not called again).
 */

import type { TextTokenCounter } from './encodings.ts';
import type { PriorityLevel } from './priority.ts';
import type { TextSummary } from './summarize-text.ts';
import { isPlainObject } from './validate-options.ts';

export interface ValueSummaryContext {
  countValue: (value: unknown) => number;
  countText: TextTokenCounter;
  summarizeText: (text: string, maxTokens: number) => Promise<TextSummary>;
  priorityOf: (element: unknown) => PriorityLevel | undefined;
  /** How many texts may be summarized at once (matters for an LLM). @default 4 */
  concurrency?: number;
}

export interface ValueSummaryRequest {
  maxTokens: number;
  ratio: number;
  preserveFields?: readonly string[] | undefined;
  summarizeFields?: readonly string[] | undefined;
}

export interface ValueSummary {
  data: Record<string, unknown>;
  tokens: number;
  preserveFields: string[];
  summarizeFields: string[];
  fallback?: TextSummary['fallback'];
}

const SHORT_CHARS = 80;
const SMALL_OBJECT_CHARS = 200;
const MIN_TEXT_TOKENS = 12;
const MIN_SCALE = 0.25;

type Role = 'keep' | 'summarize' | 'omit';
interface Part {
  key: string;
  role: Role;
  value: unknown;
}
interface TextJob {
  key: string;
  text: string;
  target: number;
}
interface Unit {
  collection: string | null;
  index: number;
  priority: number;
  /** Record fields in order, or undefined for a bare string/scalar element. */
  parts?: Part[];
  value?: unknown;
  texts: TextJob[];
  skeletonTokens: number;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n');
  return JSON.stringify(value) ?? '';
}

function roleOf(key: string, value: unknown, req: ValueSummaryRequest, topLevel: boolean): Role {
  const p = req.preserveFields;
  const s = req.summarizeFields;
  if (p?.includes(key)) return 'keep';
  if (s?.includes(key)) return 'summarize';
  if (p && s) return 'omit';
  if (typeof value === 'string')
    return value.length > SHORT_CHARS ? (s ? 'omit' : 'summarize') : p ? 'omit' : 'keep';
  if (value === null || typeof value !== 'object') return p ? 'omit' : 'keep';
  // Nested structure: records drop it (the protocol omits `evidence`, `metadata`); a small object at
  // the top level is context worth its few tokens.
  return topLevel && !p && (JSON.stringify(value) ?? '').length <= SMALL_OBJECT_CHARS ? 'keep' : 'omit';
}

function targetFor(tokens: number, ratio: number): number {
  return tokens <= MIN_TEXT_TOKENS ? tokens : Math.max(MIN_TEXT_TOKENS, Math.ceil(tokens * ratio));
}

async function mapPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export async function summarizeValue(
  value: unknown,
  req: ValueSummaryRequest,
  ctx: ValueSummaryContext,
): Promise<ValueSummary> {
  if (typeof value === 'string') return summarizeString(value, req, ctx);
  const root: Record<string, unknown> = Array.isArray(value)
    ? { items: value }
    : isPlainObject(value)
      ? value
      : { value };
  const omitted = new Set<string>();
  const preserved = new Set<string>();
  const summarized = new Set<string>();
  const fixed: Unit[] = [];
  const elements: Unit[] = [];
  const collections: string[] = [];

  // The reported field lists describe records, as in the protocol; a container's own kept fields
  // (`metadata` beside `atoms`) are listed only when there are no records. Omissions always are.
  const hasCollections = Object.entries(root).some(
    ([k, v]) => Array.isArray(v) && !req.preserveFields?.includes(k),
  );
  const record = (key: string, v: unknown, topLevel: boolean): Part => {
    const role = roleOf(key, v, req, topLevel);
    if (role === 'omit') omitted.add(key);
    else if (!topLevel || !hasCollections) (role === 'keep' ? preserved : summarized).add(key);
    return { key, role, value: v };
  };
  const jobsOf = (parts: Part[]): TextJob[] =>
    parts
      .filter((p) => p.role === 'summarize')
      .map((p) => {
        const text = textOf(p.value);
        return { key: p.key, text, target: targetFor(ctx.countText(text), req.ratio) };
      });

  for (const [key, v] of Object.entries(root)) {
    if (Array.isArray(v) && !req.preserveFields?.includes(key)) {
      collections.push(key);
      v.forEach((el, index) => {
        const priority = ctx.priorityOf(el) ?? 2;
        if (isPlainObject(el)) {
          const parts = Object.entries(el).map(([k, x]) => record(k, x, false));
          elements.push({ collection: key, index, priority, parts, texts: jobsOf(parts), skeletonTokens: 0 });
        } else {
          const long = typeof el === 'string' && el.length > SHORT_CHARS;
          const texts = long ? [{ key: '', text: el, target: targetFor(ctx.countText(el), req.ratio) }] : [];
          elements.push({ collection: key, index, priority, value: el, texts, skeletonTokens: 0 });
        }
      });
    } else {
      const parts = [record(key, v, true)];
      fixed.push({
        collection: null,
        index: fixed.length,
        priority: 0,
        parts,
        texts: jobsOf(parts),
        skeletonTokens: 0,
      });
    }
  }

  const render = (unit: Unit, summaries: Map<TextJob, string>): unknown => {
    if (!unit.parts) return unit.texts[0] ? (summaries.get(unit.texts[0]) ?? '') : unit.value;
    const out: Record<string, unknown> = {};
    for (const part of unit.parts) {
      if (part.role === 'keep') out[part.key] = part.value;
      else if (part.role === 'summarize') {
        const job = unit.texts.find((t) => t.key === part.key);
        out[`${part.key}_summary`] = job ? (summaries.get(job) ?? '') : '';
      }
    }
    return out;
  };
  const build = (kept: ReadonlySet<Unit>, summaries: Map<TextJob, string>): Record<string, unknown> => {
    const data: Record<string, unknown> = {};
    for (const key of Object.keys(root)) {
      if (collections.includes(key)) {
        const items = elements.filter((u) => u.collection === key);
        const keptItems = items.filter((u) => kept.has(u));
        data[`${key}_summary`] = keptItems.map((u) => render(u, summaries));
        data[`total_${key}`] = items.length;
        data[`summarized_${key}`] = keptItems.length;
      } else {
        const unit = fixed.find((u) => u.parts?.[0]?.key === key);
        if (unit) Object.assign(data, render(unit, summaries));
      }
    }
    data.omitted_fields = [...omitted];
    return data;
  };

  const empty = new Map<TextJob, string>();
  for (const u of elements) u.skeletonTokens = ctx.countValue(render(u, empty)) + 1;
  const budget = req.maxTokens - ctx.countValue(build(new Set(), empty));
  const aimOf = (u: Unit) => u.texts.reduce((s, t) => s + t.target, 0);
  const byImportance = [...elements].sort((a, b) => a.priority - b.priority || a.index - b.index);
  // Prefix sums over the importance order: cost of keeping the k most important records.
  const skelPrefix = [0];
  const aimPrefix = [fixed.reduce((s, u) => s + aimOf(u), 0)];
  for (const u of byImportance) {
    skelPrefix.push(skelPrefix[skelPrefix.length - 1]! + u.skeletonTokens);
    aimPrefix.push(aimPrefix[aimPrefix.length - 1]! + aimOf(u));
  }
  const need = (k: number, scale: number) => skelPrefix[k]! + scale * aimPrefix[k]!;
  let k = byImportance.length;
  let scale = 1;
  if (need(k, 1) > budget) {
    while (k > 0 && need(k, MIN_SCALE) > budget) k--;
    scale = aimPrefix[k] === 0 ? 1 : Math.max(0, Math.min(1, (budget - skelPrefix[k]!) / aimPrefix[k]!));
  }

  const kept = new Set(byImportance.slice(0, k));
  const jobs = [...fixed, ...kept].flatMap((u) => u.texts);
  let fallback: TextSummary['fallback'];
  const results = await mapPool(jobs, ctx.concurrency ?? 4, async (job) => {
    const r = await ctx.summarizeText(job.text, Math.max(1, Math.floor(job.target * scale)));
    fallback ??= r.fallback;
    return r.text;
  });
  const summaries = new Map(jobs.map((job, i) => [job, results[i]!]));
  let data = build(kept, summaries);
  let tokens = ctx.countValue(data);
  // Estimates are per piece; JSON escaping and joins shift them a little. Drop records until it fits.
  while (tokens > req.maxTokens && k > 0) {
    kept.delete(byImportance[--k]!);
    data = build(kept, summaries);
    tokens = ctx.countValue(data);
  }
  return {
    data,
    tokens,
    preserveFields: [...preserved],
    summarizeFields: [...summarized],
    ...(fallback ? { fallback } : {}),
  };
}

async function summarizeString(
  text: string,
  req: ValueSummaryRequest,
  ctx: ValueSummaryContext,
): Promise<ValueSummary> {
  const target = targetFor(ctx.countText(text), req.ratio);
  const shell = (summary: string, total: number, kept: number) => ({
    text_summary: summary,
    total_sentences: total,
    summarized_sentences: kept,
  });
  const overhead = ctx.countValue(shell('', 0, 0)) + 2;
  const r = await ctx.summarizeText(text, Math.max(1, Math.min(target, req.maxTokens - overhead)));
  const data = shell(r.text, r.totalSentences, r.keptSentences);
  return {
    data,
    tokens: ctx.countValue(data),
    preserveFields: [],
    summarizeFields: ['text'],
    ...(r.fallback ? { fallback: r.fallback } : {}),
  };
}
