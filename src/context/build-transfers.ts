/**
 * Building the transfer object for one input in each mode (protocol 002 §4 shapes). The `tokens` of
 * a plan are what the downstream agent reads for this input: `data` for full and summary, `reference` + `inline_preview` for a reference, the
 * largest batch for batched references (the agent sees one batch at a time). The few tokens of the
 * envelope (`transfer_mode`, `summary_config`) are not counted; the safety margin covers them.
 */

import { type BatchConfig, compileBatchConfig } from './batch-config.ts';
import type { AgentContextLimits } from './context-limits.ts';
import { elementPriority, type PriorityLookup } from './priority.ts';
import {
  availablePaths,
  buildReferenceTransfer,
  dataStats,
  inlinePreview,
  type ReferenceInfo,
  type ReferenceTransfer,
} from './reference-transfer.ts';
import { type Batch, splitIntoBatches } from './split-batches.ts';
import { summarizeTable } from './summarize-table.ts';
import { type Summarizer, summarizeText } from './summarize-text.ts';
import { summarizeValue } from './summarize-value.ts';
import { type ResolvedSummaryConfig, ratioFor, type SummaryConfig } from './summary-config.ts';
import { compactJson, type TokenCounter } from './token-counter.ts';
import type { TransferConfig } from './transfer-config.ts';
import type { TransferTables } from './transfer-tables.ts';

export interface FullTransfer {
  transfer_mode: 'full';
  data: unknown;
}

export interface SummaryTransfer {
  transfer_mode: 'summary';
  summary_config: ResolvedSummaryConfig & { method?: 'table_stats' | 'key_data_points' };
  data: Record<string, unknown>;
}

export interface BatchedTransfer {
  transfer_mode: 'batched_reference';
  /** Present when the input came from a data_reference. */
  reference?: ReferenceTransfer['reference'];
  batch_config: BatchConfig;
  batches: Batch[];
  total_batches: number;
  omitted_batches: number;
  inline_preview: ReferenceTransfer['inline_preview'];
}

export type TransferObject = FullTransfer | SummaryTransfer | ReferenceTransfer | BatchedTransfer;

/** What the planner is made of; built once by createContextPlanner. */
export interface TransferEngine {
  counter: TokenCounter;
  tables: TransferTables;
  limits: (agent?: string) => AgentContextLimits;
  batch: BatchConfig;
  summary: SummaryConfig;
  summarizer: Summarizer | undefined;
  previewCount: number;
  summaryConcurrency: number;
}

export interface InputShape {
  agent?: string | undefined;
  dataType?: string | undefined;
  refInfo?: ReferenceInfo | undefined;
  signal?: AbortSignal | undefined;
  transferConfig: TransferConfig;
}

export interface Built<T extends TransferObject = TransferObject> {
  transfer: T;
  tokens: number;
  notes: string[];
}

export function priorityLookup(tables: TransferTables): PriorityLookup {
  return {
    priorityOfType: (t) => (t === undefined ? undefined : tables.dataTypes[t]?.priority),
    elementTypeFields: tables.elementTypeFields,
  };
}

export function fullTransfer(engine: TransferEngine, value: unknown, shape: InputShape): Built<FullTransfer> {
  return {
    transfer: { transfer_mode: 'full', data: value },
    tokens: engine.counter.count(value, shape.agent),
    notes: [],
  };
}

export async function summaryTransfer(
  engine: TransferEngine,
  value: unknown,
  shape: InputShape,
  maxTokens = Number.POSITIVE_INFINITY,
): Promise<Built<SummaryTransfer>> {
  const cfg: SummaryConfig = { ...engine.summary, ...shape.transferConfig.summary_config };
  const strategy = cfg.strategy ?? (engine.summarizer ? 'abstractive' : 'extractive');
  const ratio = ratioFor(cfg, strategy);
  const countValue = (v: unknown) => engine.counter.count(v, shape.agent);
  const countText = engine.counter.forAgent(shape.agent);
  const tokens = countValue(value);
  const cap = Math.max(
    1,
    Math.min(tokens, cfg.max_length ?? tokens, shape.transferConfig.max_tokens ?? tokens, maxTokens),
  );
  const method = shape.dataType === undefined ? undefined : engine.tables.dataTypes[shape.dataType]?.method;
  const config = (
    preserve: string[],
    summarize: string[],
    extra: Partial<SummaryTransfer['summary_config']>,
  ) => ({
    strategy,
    max_length: cap,
    preserve_fields: preserve,
    summarize_fields: summarize,
    summary_ratio: ratio,
    ...extra,
  });
  if (method === 'table_stats') {
    const table = summarizeTable(value, cap, countValue);
    if (table)
      return {
        transfer: {
          transfer_mode: 'summary',
          summary_config: config([], [], { strategy: 'extractive', method }),
          data: table.data,
        },
        tokens: table.tokens,
        notes: [],
      };
  }
  const lookup = priorityLookup(engine.tables);
  const numericBonus = method === 'key_data_points';
  const result = await summarizeValue(
    value,
    { maxTokens: cap, ratio, preserveFields: cfg.preserve_fields, summarizeFields: cfg.summarize_fields },
    {
      countValue,
      countText,
      priorityOf: (el) => elementPriority(el, lookup),
      concurrency: engine.summaryConcurrency,
      summarizeText: (text, max) =>
        summarizeText(text, {
          strategy,
          maxTokens: max,
          count: countText,
          summarizer: engine.summarizer,
          signal: shape.signal,
          numericBonus,
        }),
    },
  );
  const notes = result.fallback
    ? [`${result.fallback.requested} fell back to extractive: ${result.fallback.reason}`]
    : [];
  return {
    transfer: {
      transfer_mode: 'summary',
      summary_config: config(result.preserveFields, result.summarizeFields, {
        ...(result.fallback ? { strategy: 'extractive', strategy_fallback: result.fallback } : {}),
        ...(numericBonus ? { method } : {}),
      }),
      data: result.data,
    },
    tokens: result.tokens,
    notes,
  };
}

export function referenceTransfer(
  engine: TransferEngine,
  value: unknown,
  shape: InputShape & { refInfo: ReferenceInfo },
  maxTokens = Number.POSITIVE_INFINITY,
): Built<ReferenceTransfer> {
  const limit = Math.min(maxTokens, shape.transferConfig.max_tokens ?? Number.POSITIVE_INFINITY);
  const { transfer, tokens } = buildReferenceTransfer(value, {
    ref: shape.refInfo,
    previewCount: shape.transferConfig.inline_preview_count ?? engine.previewCount,
    maxTokens: Number.isFinite(limit) ? limit : undefined,
    json: typeof value === 'string' ? value : compactJson(value),
    tokens: engine.counter.count(value, shape.agent),
    countValue: (v) => engine.counter.count(v, shape.agent),
  });
  return { transfer, tokens, notes: [] };
}

export function batchedTransfer(
  engine: TransferEngine,
  value: unknown,
  shape: InputShape,
): Built<BatchedTransfer> {
  const cfg = compileBatchConfig(
    shape.transferConfig.batch_config ?? {},
    'transfer_config.batch_config',
    engine.batch,
    'INVALID_INPUT',
  );
  // A batch must fit the agent's window and the step's own cap.
  const size = Math.min(
    cfg.batch_size_tokens,
    shape.transferConfig.max_tokens ?? cfg.batch_size_tokens,
    engine.limits(shape.agent).effective_data_limit,
  );
  const config: BatchConfig = {
    ...cfg,
    batch_size_tokens: size,
    overlap_tokens: cfg.overlap_tokens < size ? cfg.overlap_tokens : Math.floor(size / 10),
  };
  const lookup = priorityLookup(engine.tables);
  const split = splitIntoBatches(value, config, {
    countValue: (v) => engine.counter.count(v, shape.agent),
    countText: engine.counter.forAgent(shape.agent),
    priorityOf: (el) => elementPriority(el, lookup),
  });
  const tokens = split.batches.reduce((m, b) => Math.max(m, b.tokens), 0);
  const json = typeof value === 'string' ? value : compactJson(value);
  const reference = shape.refInfo
    ? {
        ...shape.refInfo,
        available_paths: availablePaths(value, shape.refInfo),
        data_stats: dataStats(value, json, engine.counter.count(value, shape.agent)),
      }
    : undefined;
  const notes =
    split.omitted_batches > 0
      ? [
          `${split.omitted_batches} of ${split.total_batches} batches dropped by max_batches ${config.max_batches}`,
        ]
      : [];
  return {
    transfer: {
      transfer_mode: 'batched_reference',
      ...(reference ? { reference } : {}),
      batch_config: config,
      batches: split.batches,
      total_batches: split.total_batches,
      omitted_batches: split.omitted_batches,
      inline_preview: inlinePreview(value, shape.transferConfig.inline_preview_count ?? engine.previewCount),
    },
    tokens,
    notes,
  };
}
