/**
 * The transfer-mode decision for one input (protocol 002 §5.4), and how the three tables combine.
 *
 * The §5.4 tree first splits by size, then, in the middle band, asks what the downstream task needs:
 *
 *   0. A data type marked `keepFull` (instructions, system prompt: "必须完整传递") is always full.
 *   1. An explicit `transfer_config.mode` wins over every table.
 *   2. Size (§5.1 / root of §5.4): < fullBelow (2K) → full; > batchedAbove (50K) → batched reference.
 *   3. Middle band (2K–50K), the tree's "check task type" node:
 *      a. The task-type table (§5.2) gives the need: full detail (Scholar, Code), a summary
 *         (Validator, Strategic_Critic, Orchestrator) or an index (Knowledge_Vault → reference).
 *      b. The data-type table (§5.3) refines only a `summary` need: a type that must not be compressed
 *         or is small (code, formula, metadata → full) or is queried on demand (relation graph →
 *         reference) replaces it. A full or reference need stands: the task asked for the detail, or
 *         to fetch on demand, whatever the data.
 *      c. No task-type row: the data-type table decides.
 *      d. Neither table knows: §5.1 decides by size — below summaryBelow (10K) summary, else
 *         reference with an inline preview.
 *   4. Guards, in order: an automatic `full` larger than `transfer_config.max_tokens` becomes a summary
 *      (or a reference if the type is not compressible); a summary of an incompressible type becomes a
 *      reference; a reference without a data_reference to point at (nothing the agent could fetch)
 *      becomes a summary, or full if the type is not compressible.
 */

import type { TableMode, TransferTables } from './transfer-tables.ts';

export const TransferModes = ['full', 'summary', 'reference', 'batched_reference'] as const;
export type TransferMode = (typeof TransferModes)[number];

export type DecisionSource =
  | 'keep_full'
  | 'transfer_config'
  | 'size'
  | 'task_type'
  | 'data_type'
  | 'size_table'
  | 'max_tokens'
  | 'incompressible'
  | 'no_reference';

export interface ModeDecision {
  mode: TransferMode;
  /** Which rule made the final choice. */
  by: DecisionSource;
  reason: string;
}

export interface ModeQuery {
  tokens: number;
  taskType?: string | undefined;
  dataType?: string | undefined;
  explicitMode?: TransferMode | undefined;
  maxTokens?: number | undefined;
  /** Whether a data_reference exists that the downstream agent could fetch from. */
  hasReference: boolean;
}

export function chooseTransferMode(q: ModeQuery, tables: TransferTables): ModeDecision {
  const rule = q.dataType === undefined ? undefined : tables.dataTypes[q.dataType];
  const compressible = rule?.compressible !== false;
  if (rule?.keepFull)
    return { mode: 'full', by: 'keep_full', reason: `data type ${q.dataType} is always passed in full` };

  let decision: ModeDecision;
  if (q.explicitMode !== undefined) {
    decision = {
      mode: q.explicitMode,
      by: 'transfer_config',
      reason: `transfer_config.mode is ${q.explicitMode}`,
    };
  } else {
    decision = bySize(q, tables) ?? byTables(q, tables, rule?.mode);
    if (decision.mode === 'full' && q.maxTokens !== undefined && q.tokens > q.maxTokens)
      decision = compressible
        ? {
            mode: 'summary',
            by: 'max_tokens',
            reason: `${q.tokens} tokens exceed transfer_config.max_tokens ${q.maxTokens}`,
          }
        : {
            mode: 'reference',
            by: 'max_tokens',
            reason: `${q.tokens} tokens exceed transfer_config.max_tokens ${q.maxTokens} and ${q.dataType} is not compressible`,
          };
    if (decision.mode === 'summary' && !compressible)
      decision = {
        mode: 'reference',
        by: 'incompressible',
        reason: `data type ${q.dataType} must not be summarized`,
      };
  }
  if (decision.mode === 'reference' && !q.hasReference)
    decision = {
      mode: compressible ? 'summary' : 'full',
      by: 'no_reference',
      reason: `${decision.reason}; no data_reference to point at, so ${compressible ? 'summarized' : 'passed in full'}`,
    };
  return decision;
}

function bySize(q: ModeQuery, tables: TransferTables): ModeDecision | undefined {
  const { fullBelow, batchedAbove } = tables.sizeThresholds;
  if (q.tokens < fullBelow) return { mode: 'full', by: 'size', reason: `${q.tokens} tokens < ${fullBelow}` };
  if (q.tokens > batchedAbove)
    return { mode: 'batched_reference', by: 'size', reason: `${q.tokens} tokens > ${batchedAbove}` };
  return undefined;
}

function byTables(q: ModeQuery, tables: TransferTables, typeMode: TableMode | undefined): ModeDecision {
  const taskMode = q.taskType === undefined ? undefined : tables.taskTypes[q.taskType];
  if (taskMode !== undefined) {
    if (taskMode === 'summary' && typeMode !== undefined && typeMode !== 'summary')
      return {
        mode: typeMode,
        by: 'data_type',
        reason: `task ${q.taskType} accepts a summary; data type ${q.dataType} → ${typeMode}`,
      };
    return { mode: taskMode, by: 'task_type', reason: `task ${q.taskType} → ${taskMode}` };
  }
  if (typeMode !== undefined)
    return { mode: typeMode, by: 'data_type', reason: `data type ${q.dataType} → ${typeMode}` };
  const { summaryBelow } = tables.sizeThresholds;
  return q.tokens < summaryBelow
    ? { mode: 'summary', by: 'size_table', reason: `${q.tokens} tokens < ${summaryBelow}, no table row` }
    : { mode: 'reference', by: 'size_table', reason: `${q.tokens} tokens ≥ ${summaryBelow}, no table row` };
}
