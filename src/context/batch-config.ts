/**
 * The protocol's `batch_config` (002 §6.2) with its defaults, validated once. `seed` is Baton's
 * addition: `batch_priority: "random"` shuffles with a seeded generator, so a plan is reproducible
 * (on resume, the same batches come out).
 */

import type { ErrorCode } from '../core/index.ts';
import { ValidationError } from '../core/index.ts';
import {
  expectBoolean,
  expectInteger,
  expectObject,
  expectOneOf,
  rejectUnknownKeys,
} from './validate-options.ts';

export const AggregationStrategies = ['merge', 'vote', 'latest', 'weighted'] as const;
export type AggregationStrategy = (typeof AggregationStrategies)[number];
export const BatchPriorities = ['chronological', 'importance', 'random'] as const;
export type BatchPriority = (typeof BatchPriorities)[number];

export interface BatchConfig {
  /** @default true */
  enabled: boolean;
  /** @default 30000 */
  batch_size_tokens: number;
  /** Tokens of text repeated at the start of the next batch (text only). @default 500 */
  overlap_tokens: number;
  /** @default 10 */
  max_batches: number;
  /** @default 'merge' */
  aggregation_strategy: AggregationStrategy;
  /** Order in which elements are packed and batches run; the last ones are dropped past max_batches. @default 'chronological' */
  batch_priority: BatchPriority;
  /** Seed of the `random` order. @default 0 */
  seed: number;
}

export const DEFAULT_BATCH_CONFIG: Readonly<BatchConfig> = {
  enabled: true,
  batch_size_tokens: 30_000,
  overlap_tokens: 500,
  max_batches: 10,
  aggregation_strategy: 'merge',
  batch_priority: 'chronological',
  seed: 0,
};

const KEYS = Object.keys(DEFAULT_BATCH_CONFIG);

/** Validates a partial batch_config and fills in the rest from `base`. */
export function compileBatchConfig(
  value: unknown,
  field = 'batch_config',
  base: BatchConfig = DEFAULT_BATCH_CONFIG,
  code: ErrorCode = 'INVALID_OPTION',
): BatchConfig {
  const obj = expectObject(value ?? {}, field, code);
  rejectUnknownKeys(obj, KEYS, field, code);
  const out: BatchConfig = { ...base };
  if (obj.enabled !== undefined) out.enabled = expectBoolean(obj.enabled, `${field}.enabled`, code);
  if (obj.batch_size_tokens !== undefined)
    out.batch_size_tokens = expectInteger(obj.batch_size_tokens, `${field}.batch_size_tokens`, 1, code);
  if (obj.overlap_tokens !== undefined)
    out.overlap_tokens = expectInteger(obj.overlap_tokens, `${field}.overlap_tokens`, 0, code);
  if (obj.max_batches !== undefined)
    out.max_batches = expectInteger(obj.max_batches, `${field}.max_batches`, 1, code);
  if (obj.aggregation_strategy !== undefined)
    out.aggregation_strategy = expectOneOf(
      obj.aggregation_strategy,
      AggregationStrategies,
      `${field}.aggregation_strategy`,
      code,
    );
  if (obj.batch_priority !== undefined)
    out.batch_priority = expectOneOf(obj.batch_priority, BatchPriorities, `${field}.batch_priority`, code);
  if (obj.seed !== undefined) out.seed = expectInteger(obj.seed, `${field}.seed`, 0, code);
  if (out.overlap_tokens >= out.batch_size_tokens)
    throw new ValidationError(
      `${field}.overlap_tokens`,
      `less than batch_size_tokens (${out.batch_size_tokens})`,
      out.overlap_tokens,
      {
        code,
      },
    );
  return out;
}

/** mulberry32: a tiny, well-mixed 32-bit PRNG; enough for reproducible shuffles. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates with a seeded generator: same seed, same order. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const next = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
