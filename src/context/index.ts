/**
 * Context budgets for agent steps (protocol 002 §4–7): token counting per agent encoding, context
 * limits per agent, transfer planning (full / summary / reference / batched references), summaries,
 * batching and aggregation, §6.3 priority trimming, and the `context_management` report.
 * Pure, no I/O; the only await is an optional LLM summarizer.
 */

export {
  type AggregateOptions,
  type AggregateResult,
  aggregateBatchResults,
  canonicalJson,
} from './aggregate-batches.ts';
export {
  AggregationStrategies,
  type AggregationStrategy,
  type BatchConfig,
  BatchPriorities,
  type BatchPriority,
  DEFAULT_BATCH_CONFIG,
} from './batch-config.ts';
export type { BatchedTransfer, FullTransfer, SummaryTransfer, TransferObject } from './build-transfers.ts';
export {
  type DecisionSource,
  type ModeDecision,
  type TransferMode,
  TransferModes,
} from './choose-transfer-mode.ts';
export {
  type AgentContextConfig,
  type AgentContextLimits,
  type ContextLimits,
  type ContextLimitsConfig,
  DEFAULT_AGENT_CONTEXT,
  DEFAULT_CONTEXT_LIMITS,
} from './context-limits.ts';
export {
  type ContextAction,
  type ContextActionName,
  ContextActions,
  type ContextManagement,
  type ContextManagementReport,
  checkContextReport,
  type ResolutionStrategy,
} from './context-report.ts';
export type { ContextInput, PlanContextRequest } from './context-request.ts';
export {
  type ContextPlanner,
  type ContextPlannerOptions,
  createContextPlanner,
  type PlanTransferOptions,
} from './create-context-planner.ts';
export { type EncodingName, EncodingNames, type TextTokenCounter } from './encodings.ts';
export type { ContextPlan, PlannedInput } from './plan-context.ts';
export type { PlannedTransfer } from './plan-transfer.ts';
export { type PriorityLevel, PriorityLevelNames } from './priority.ts';
export type { ReferenceInfo, ReferenceTransfer } from './reference-transfer.ts';
export type { Batch } from './split-batches.ts';
export {
  STRATEGY_RATIOS,
  type Summarizer,
  SummaryStrategies,
  type SummaryStrategy,
} from './summarize-text.ts';
export type { ResolvedSummaryConfig, SummaryConfig } from './summary-config.ts';
export type { TokenCacheOptions, TokenCacheStats } from './token-counter.ts';
export type { TransferConfig } from './transfer-config.ts';
export {
  type CompressionMethod,
  CompressionMethods,
  type DataTypeRule,
  DEFAULT_TRANSFER_TABLES,
  type SizeThresholds,
  type TableMode,
  type TransferTables,
  type TransferTablesOptions,
} from './transfer-tables.ts';
export { DEFAULT_TRIM_THRESHOLDS, type TrimOptions } from './trim-by-priority.ts';
