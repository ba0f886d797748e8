/**
 * The resumable, deadline-bound agent (ReAct) loop of protocol 003 and its pure checkpoint logic:
 * checkpoint state, history compression that never splits a tool call from its result,
 * validation, resume planning, and a scripted local model. No storage and no HTTP here: the
 * engine stores checkpoints through `onCheckpoint` and records `onEvent` events.
 */
export type { AgentEvent, AgentEventWithTime, CheckpointReason } from './agent-events.ts';
export { AgentLoopError } from './agent-loop-error.ts';
export type { AgentLoopCompleted, AgentLoopResult, AgentLoopTimedOut } from './agent-loop-result.ts';
export { type AgentTool, type AgentToolContext, agentTool } from './agent-tools.ts';
export type { CreateCheckpointStateInput } from './checkpoint-state.ts';
export { CHECKPOINT_VERSION, type CheckpointState, createCheckpointState } from './checkpoint-state.ts';
export {
  type CompressionMarkerInfo,
  type CompressionOptions,
  type CompressionResult,
  compressConversationHistory,
  countModelTurns,
  readCompressionMarker,
} from './compress-history.ts';
export { analyzeToolPairing, groupExchanges, type ToolPairing } from './conversation-exchanges.ts';
export type { AgentLoopInitResult, AgentLoopOptions } from './loop-options.ts';
export { type PlanResumeOptions, planResume, type ResumePlan } from './plan-resume.ts';
export { runAgentLoop } from './run-agent-loop.ts';
export {
  createScriptedModel,
  type Script,
  type ScriptContext,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedTurn,
} from './scripted-model.ts';
export {
  type CheckpointValidation,
  type ValidateCheckpointOptions,
  validateCheckpoint,
} from './validate-checkpoint.ts';
