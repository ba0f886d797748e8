/**
 * The protocol's `summary_config` (002 §4.2). `max_length` is in tokens of the summary's `data`
 * (as compact JSON, or the text itself), because every other budget here is in tokens and a
 * character budget would mean something different in English and Chinese. `summary_ratio` is the
 * fraction of each summarized field's tokens the summarizer aims at; without one, the middle of the
 * strategy's protocol range (extractive 0.3, abstractive 0.2, key_points 0.15, truncate 0.3).
 */

import type { ErrorCode } from '../core/index.ts';
import { defaultSummaryRatio, SummaryStrategies, type SummaryStrategy } from './summarize-text.ts';
import {
  expectInteger,
  expectObject,
  expectOneOf,
  expectRatio,
  expectStringArray,
  rejectUnknownKeys,
} from './validate-options.ts';

export interface SummaryConfig {
  /** Strategy (§4.2 table). @default 'abstractive' when a summarizer is configured, else 'extractive' */
  strategy?: SummaryStrategy;
  /** Upper bound on the summary, in tokens. @default none: the ratio alone sets the length */
  max_length?: number;
  /** Fields kept as they are. @default inferred: numbers, booleans, null and strings ≤ 80 chars */
  preserve_fields?: string[];
  /** Fields replaced by `<field>_summary`. @default inferred: strings longer than 80 chars */
  summarize_fields?: string[];
  /** Target length of each summarized field as a fraction of its tokens. @default per strategy */
  summary_ratio?: number;
}

/** The summary_config reported with a summary: everything resolved. */
export interface ResolvedSummaryConfig {
  strategy: SummaryStrategy;
  max_length: number;
  preserve_fields: string[];
  summarize_fields: string[];
  summary_ratio: number;
  /** Present when the requested strategy could not be used. */
  strategy_fallback?: { requested: SummaryStrategy; reason: string };
}

export const SUMMARY_CONFIG_KEYS = [
  'strategy',
  'max_length',
  'preserve_fields',
  'summarize_fields',
  'summary_ratio',
] as const;

export function checkSummaryConfig(
  value: unknown,
  field: string,
  code: ErrorCode = 'INVALID_OPTION',
): SummaryConfig {
  const obj = expectObject(value, field, code);
  rejectUnknownKeys(obj, SUMMARY_CONFIG_KEYS, field, code);
  const out: SummaryConfig = {};
  if (obj.strategy !== undefined)
    out.strategy = expectOneOf(obj.strategy, SummaryStrategies, `${field}.strategy`, code);
  if (obj.max_length !== undefined)
    out.max_length = expectInteger(obj.max_length, `${field}.max_length`, 1, code);
  if (obj.preserve_fields !== undefined)
    out.preserve_fields = expectStringArray(obj.preserve_fields, `${field}.preserve_fields`, code);
  if (obj.summarize_fields !== undefined)
    out.summarize_fields = expectStringArray(obj.summarize_fields, `${field}.summarize_fields`, code);
  if (obj.summary_ratio !== undefined)
    out.summary_ratio = expectRatio(obj.summary_ratio, `${field}.summary_ratio`, code);
  return out;
}

export function ratioFor(config: SummaryConfig, strategy: SummaryStrategy): number {
  return config.summary_ratio ?? defaultSummaryRatio(strategy);
}
