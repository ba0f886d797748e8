/**
 * Combining the results of batches (protocol 002 §6.2 aggregation strategies):
 * - `merge`: arrays concatenated with duplicates removed (equal JSON, or equal `dedupeBy` field);
 *   objects deep-merged (arrays inside merged the same way; for other clashing fields the later batch
 *   wins); strings joined, duplicates removed; anything else: the latest.
 * - `vote`: the result most batches returned (equal JSON, key order ignored). A tie goes to the value
 *   that appeared first in batch order, so the outcome never depends on hashing.
 * - `latest`: the last batch's result.
 * - `weighted`: each result weighs `weights[i]`, or its own `confidence` (else `weight`, else 1)
 *   field: numbers → weighted mean; objects → field by field; arrays → union ordered by the total
 *   weight behind each element; anything else → weighted vote (ties to the earliest).
 * Null and undefined results (a batch that produced nothing) are ignored by every strategy.
 */

import { ValidationError } from '../core/index.ts';
import type { AggregationStrategy } from './batch-config.ts';
import { isPlainObject } from './validate-options.ts';

export interface AggregateOptions {
  strategy: AggregationStrategy;
  /** `weighted`: one non-negative weight per result. */
  weights?: readonly number[];
  /** `weighted`: the field that holds a result's weight. @default 'confidence', then 'weight' */
  weightField?: string;
  /** `merge`: the field that identifies an array element (e.g. 'atom_id'). @default whole-element equality */
  dedupeBy?: string;
}

export interface AggregateResult {
  value: unknown;
  strategy: AggregationStrategy;
  /** Results that took part (null/undefined ones excluded). */
  batches: number;
  /** `vote` and weighted votes: support of the winner. */
  votes?: { winner: number; total: number; tied: boolean };
}

/** JSON with object keys sorted, so equal data compares equal whatever its key order. */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      isPlainObject(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, v[k]]),
          )
        : v,
    ) ?? 'undefined'
  );
}

function mergeArrays(arrays: readonly unknown[][], dedupeBy: string | undefined): unknown[] {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const arr of arrays)
    for (const el of arr) {
      const id =
        dedupeBy && isPlainObject(el) && el[dedupeBy] !== undefined
          ? `id:${canonicalJson(el[dedupeBy])}`
          : `v:${canonicalJson(el)}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(el);
    }
  return out;
}

function mergeTwo(a: unknown, b: unknown, dedupeBy: string | undefined): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return mergeArrays([a, b], dedupeBy);
  if (isPlainObject(a) && isPlainObject(b)) {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = k in a ? mergeTwo(a[k], v, dedupeBy) : v;
    return out;
  }
  return b;
}

function merge(results: readonly unknown[], dedupeBy: string | undefined): unknown {
  if (results.every(Array.isArray)) return mergeArrays(results as unknown[][], dedupeBy);
  if (results.every((r) => typeof r === 'string')) return [...new Set(results as string[])].join('\n\n');
  if (results.every(isPlainObject))
    return results.slice(1).reduce<unknown>((acc, r) => mergeTwo(acc, r, dedupeBy), results[0]);
  return results[results.length - 1];
}

/** The value with the most weight; ties go to the one seen first. */
function weightedVote(values: readonly unknown[], weights: readonly number[]) {
  const tally = new Map<string, { value: unknown; weight: number; first: number }>();
  values.forEach((value, i) => {
    const key = canonicalJson(value);
    const entry = tally.get(key);
    if (entry) entry.weight += weights[i]!;
    else tally.set(key, { value, weight: weights[i]!, first: i });
  });
  const ranked = [...tally.values()].sort((x, y) => y.weight - x.weight || x.first - y.first);
  const winner = ranked[0]!;
  const total = weights.reduce((s, w) => s + w, 0);
  return {
    value: winner.value,
    votes: { winner: winner.weight, total, tied: ranked[1]?.weight === winner.weight },
  };
}

function weightsOf(
  results: readonly unknown[],
  options: AggregateOptions,
  given: readonly number[] | undefined,
): number[] {
  const weights = results.map((r, i) => {
    if (given) return given[i]!;
    if (!isPlainObject(r)) return 1;
    const field = options.weightField ?? ('confidence' in r ? 'confidence' : 'weight');
    const w = r[field];
    return typeof w === 'number' ? w : 1;
  });
  weights.forEach((w, i) => {
    if (!Number.isFinite(w) || w < 0) throw new ValidationError(`weights[${i}]`, 'a finite number ≥ 0', w);
  });
  return weights.some((w) => w > 0) ? weights : weights.map(() => 1);
}

function weighted(values: readonly unknown[], weights: readonly number[]): unknown {
  const total = weights.reduce((s, w) => s + w, 0);
  if (values.every((v) => typeof v === 'number' && Number.isFinite(v)))
    return (values as number[]).reduce((s, v, i) => s + v * weights[i]!, 0) / total;
  if (values.every(isPlainObject)) {
    const out: Record<string, unknown> = {};
    const keys = [...new Set(values.flatMap((v) => Object.keys(v as object)))];
    for (const k of keys) {
      const idx = values.map((_, i) => i).filter((i) => k in (values[i] as object));
      out[k] = weighted(
        idx.map((i) => (values[i] as Record<string, unknown>)[k]),
        idx.map((i) => weights[i]!),
      );
    }
    return out;
  }
  if (values.every(Array.isArray)) {
    const support = new Map<string, { value: unknown; weight: number; first: number }>();
    let n = 0;
    values.forEach((arr, i) => {
      for (const el of new Map((arr as unknown[]).map((e) => [canonicalJson(e), e])).entries()) {
        const entry = support.get(el[0]);
        if (entry) entry.weight += weights[i]!;
        else support.set(el[0], { value: el[1], weight: weights[i]!, first: n++ });
      }
    });
    return [...support.values()].sort((x, y) => y.weight - x.weight || x.first - y.first).map((e) => e.value);
  }
  return weightedVote(values, weights).value;
}

export function aggregateBatchResults(
  results: readonly unknown[],
  options: AggregateOptions,
): AggregateResult {
  const given = options.weights;
  if (given !== undefined && given.length !== results.length)
    throw new ValidationError(
      'weights',
      `one weight per result (${results.length})`,
      `${given.length} weights`,
    );
  const present = results.map((r, i) => ({ r, i })).filter(({ r }) => r !== null && r !== undefined);
  const values = present.map(({ r }) => r);
  const base = { strategy: options.strategy, batches: values.length };
  if (values.length === 0) return { ...base, value: null };
  switch (options.strategy) {
    case 'merge':
      return { ...base, value: merge(values, options.dedupeBy) };
    case 'latest':
      return { ...base, value: values[values.length - 1] };
    case 'vote': {
      const { value, votes } = weightedVote(
        values,
        values.map(() => 1),
      );
      return { ...base, value, votes };
    }
    case 'weighted': {
      const weights = weightsOf(values, options, given && present.map(({ i }) => given[i]!));
      const scalarVote = !values.every((v) => typeof v === 'number' || isPlainObject(v) || Array.isArray(v));
      return scalarVote
        ? { ...base, ...weightedVote(values, weights) }
        : { ...base, value: weighted(values, weights) };
    }
  }
}
