/**
 * The planner handle. Options are validated once, here, and only the encodings in use are loaded
 * (the default plus those the agent map names), which is why creating a planner is async; after
 * that, counting is synchronous and planning only awaits an LLM summarizer, if one is configured.
 */

import { ValidationError } from '../core/index.ts';
import { type BatchConfig, compileBatchConfig } from './batch-config.ts';
import type { TransferEngine } from './build-transfers.ts';
import {
  type AgentContextConfig,
  type AgentContextLimits,
  type ContextLimitsConfig,
  compileContextLimits,
} from './context-limits.ts';
import type { PlanContextRequest } from './context-request.ts';
import { type EncodingName, isEncodingName, loadEncoding, type TextTokenCounter } from './encodings.ts';
import { type ContextPlan, planContext } from './plan-context.ts';
import { type PlannedTransfer, planTransferDetailed } from './plan-transfer.ts';
import type { ReferenceInfo } from './reference-transfer.ts';
import type { Summarizer } from './summarize-text.ts';
import { checkSummaryConfig, type SummaryConfig } from './summary-config.ts';
import { createTokenCounter, type TokenCacheOptions, type TokenCacheStats } from './token-counter.ts';
import { checkTransferConfig, type TransferConfig } from './transfer-config.ts';
import { compileTransferTables, type TransferTables, type TransferTablesOptions } from './transfer-tables.ts';
import type { TrimOptions } from './trim-by-priority.ts';
import { expectInteger, expectObject, expectOneOf, expectRatio } from './validate-options.ts';

export interface ContextPlannerOptions {
  /** The shared `context_limits` (protocol §6.1 shape). @default DEFAULT_CONTEXT_LIMITS */
  contextLimits?: ContextLimitsConfig;
  /** Per-agent rows over DEFAULT_AGENT_CONTEXT; `null` removes one. */
  agentLimits?: Record<string, AgentContextConfig | null>;
  /** Strategy tables and default priorities over DEFAULT_TRANSFER_TABLES. */
  tables?: TransferTablesOptions;
  /** Encoding when an agent has none. @default 'o200k_base' */
  defaultEncoding?: EncodingName | string;
  /**
   * Agent → encoding, as a map or a function. With a function, list every encoding it may return in
   * `encodings`, since only those are loaded. @default every agent uses defaultEncoding
   * @example { Scholar: 'cl100k_base' }
   */
  encodingFor?:
    | Record<string, EncodingName | string>
    | ((agent: string) => EncodingName | string | undefined);
  /** Extra encodings to load (for an `encodingFor` function). */
  encodings?: readonly EncodingName[];
  /** Non-OpenAI tokenizers by name, usable as encodings (e.g. `{ claude: (t) => myCount(t) }`). */
  customEncodings?: Record<string, TextTokenCounter>;
  /** @default { maxEntries: 16384, hashAbove: 1024 } */
  tokenCache?: TokenCacheOptions;
  /** An abstractive summarizer (LLM). Without it, `abstractive` falls back to extractive. */
  summarizer?: Summarizer;
  /** Default summary_config (protocol §4.2). */
  summary?: SummaryConfig;
  /** Default batch_config (protocol §6.2). @default DEFAULT_BATCH_CONFIG */
  batch?: Partial<BatchConfig>;
  /** Default inline_preview_count of references. @default 3 */
  previewCount?: number;
  /** §6.3 thresholds and summary sizing. @default { thresholds: { 2: 0.8, 3: 0.9, 4: 0.95 }, minSummaryTokens: 64 } */
  trim?: TrimOptions;
  /** Texts summarized at once (bounds concurrent LLM calls). @default 4 */
  summaryConcurrency?: number;
  /** What planContext does when the plan cannot fit. @default 'report' (within_limit: false) */
  onOverflow?: 'report' | 'throw';
}

export interface PlanTransferOptions {
  agent?: string;
  /** @default agent */
  taskType?: string;
  dataType?: string;
  transferConfig?: TransferConfig;
  refInfo?: ReferenceInfo;
  signal?: AbortSignal;
}

export interface ContextPlanner {
  /** Tokens of a value for an agent: a string as is, anything else as compact JSON. */
  countTokens(value: unknown, agent?: string): number;
  encodingOf(agent?: string): string;
  /** The agent's effective data limit (protocol §6.1). */
  effectiveLimit(agent?: string): number;
  /** The full `context_limits` in force for an agent. */
  limitsFor(agent?: string): AgentContextLimits;
  /** Plans one input: chooses its mode and builds the protocol transfer object. */
  planTransfer(value: unknown, options?: PlanTransferOptions): Promise<PlannedTransfer>;
  /** Plans every input of a step into the agent's window and reports it (protocol §7.2). */
  planContext(request: PlanContextRequest): Promise<ContextPlan>;
  readonly tables: TransferTables;
  tokenCacheStats(): TokenCacheStats;
  /** Drops the cached count of an object mutated after it was counted. */
  forget(value: object): void;
}

function checkTrim(trim: TrimOptions | undefined): TrimOptions {
  if (trim === undefined) return {};
  const obj = expectObject(trim, 'trim');
  const out: TrimOptions = {};
  if (obj.thresholds !== undefined) {
    const t = expectObject(obj.thresholds, 'trim.thresholds');
    const th = {
      2: expectRatio(t[2], 'trim.thresholds.2'),
      3: expectRatio(t[3], 'trim.thresholds.3'),
      4: expectRatio(t[4], 'trim.thresholds.4'),
    };
    if (!(th[2] <= th[3] && th[3] <= th[4]))
      throw new ValidationError(
        'trim.thresholds',
        'non-decreasing from level 2 to 4',
        `${th[2]}, ${th[3]}, ${th[4]}`,
        { code: 'INVALID_OPTION' },
      );
    out.thresholds = th;
  }
  if (obj.summaryRatio !== undefined) out.summaryRatio = expectRatio(obj.summaryRatio, 'trim.summaryRatio');
  if (obj.minSummaryTokens !== undefined)
    out.minSummaryTokens = expectInteger(obj.minSummaryTokens, 'trim.minSummaryTokens', 0);
  return out;
}

/**
 * Creates a planner: validates the options and loads the encodings it needs.
 * @example
 * const planner = await createContextPlanner({ encodingFor: { Scholar: 'cl100k_base' } });
 * const { inputs, report } = await planner.planContext({
 *   taskId: 'task_vault_001',
 *   agent: 'Knowledge_Vault',
 *   inputs: [
 *     { name: 'scholar_output', value: atoms, priority: 1, refInfo: { ref_type: 'task_output', task_id: 'task_scholar_001', path: '$.atoms' } },
 *     { name: 'task_instructions', value: instructions, dataType: 'instruction' },
 *   ],
 * });
 */
export async function createContextPlanner(options: ContextPlannerOptions = {}): Promise<ContextPlanner> {
  expectObject(options, 'options');
  if (options.summarizer !== undefined && typeof options.summarizer !== 'function')
    throw new ValidationError(
      'summarizer',
      'a function (text, { maxTokens, language, signal }) => Promise<string>',
      options.summarizer,
      {
        code: 'INVALID_OPTION',
      },
    );
  const limits = compileContextLimits({
    ...(options.contextLimits ? { contextLimits: options.contextLimits } : {}),
    ...(options.agentLimits ? { agents: options.agentLimits } : {}),
  });
  const tables = compileTransferTables(options.tables ?? {});
  const custom = options.customEncodings ?? {};
  const known = (name: unknown, field: string): string => {
    if (isEncodingName(name) || (typeof name === 'string' && typeof custom[name] === 'function')) return name;
    throw new ValidationError(
      field,
      'a gpt-tokenizer encoding (o200k_base, cl100k_base, ...) or a customEncodings name',
      name,
      {
        code: 'INVALID_OPTION',
      },
    );
  };
  const defaultEncoding = known(options.defaultEncoding ?? 'o200k_base', 'defaultEncoding');
  const map = typeof options.encodingFor === 'function' ? undefined : (options.encodingFor ?? {});
  const wanted = new Set<string>([
    defaultEncoding,
    ...(options.encodings ?? []).map((e, i) => known(e, `encodings[${i}]`)),
  ]);
  // Custom tokenizers cost nothing to keep: all of them are available.
  for (const name of Object.keys(custom)) wanted.add(known(name, `customEncodings.${name}`));
  if (map)
    for (const [agent, enc] of Object.entries(expectObject(map, 'encodingFor')))
      wanted.add(known(enc, `encodingFor.${agent}`));
  const counters = new Map<string, TextTokenCounter>();
  for (const name of wanted)
    counters.set(name, isEncodingName(name) ? await loadEncoding(name) : custom[name]!);
  const fn = typeof options.encodingFor === 'function' ? options.encodingFor : undefined;
  const counter = createTokenCounter({
    counters,
    ...(options.tokenCache ?? {}),
    encodingFor: (agent) => {
      if (agent === undefined) return defaultEncoding;
      const enc = fn ? fn(agent) : map?.[agent];
      if (enc === undefined) return defaultEncoding;
      if (!counters.has(enc))
        throw new ValidationError(
          `encodingFor(${agent})`,
          `one of the loaded encodings (${[...counters.keys()].join(', ')})`,
          enc,
          { code: 'INVALID_OPTION' },
        );
      return enc;
    },
  });
  const engine: TransferEngine = {
    counter,
    tables,
    limits,
    batch: compileBatchConfig(options.batch ?? {}, 'batch'),
    summary: options.summary === undefined ? {} : checkSummaryConfig(options.summary, 'summary'),
    summarizer: options.summarizer,
    previewCount:
      options.previewCount === undefined ? 3 : expectInteger(options.previewCount, 'previewCount', 0),
    summaryConcurrency:
      options.summaryConcurrency === undefined
        ? 4
        : expectInteger(options.summaryConcurrency, 'summaryConcurrency', 1),
  };
  const onOverflow = expectOneOf(options.onOverflow ?? 'report', ['report', 'throw'] as const, 'onOverflow');
  const planOptions = { trim: checkTrim(options.trim), onOverflow };
  return {
    countTokens: (value, agent) => counter.count(value, agent),
    encodingOf: (agent) => counter.encodingOf(agent),
    effectiveLimit: (agent) => limits(agent).effective_data_limit,
    limitsFor: (agent) => limits(agent),
    planTransfer: async (value, o = {}) => {
      const transferConfig =
        o.transferConfig === undefined ? {} : checkTransferConfig(o.transferConfig, 'transferConfig');
      const { working: _w, ...plan } = await planTransferDetailed(engine, value, { ...o, transferConfig });
      return plan;
    },
    planContext: (request) => planContext(engine, request, planOptions),
    tables,
    tokenCacheStats: () => counter.stats(),
    forget: (value) => counter.forget(value),
  };
}
