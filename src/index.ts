/**
 * Baton: a durable, time-aware runtime for multi-agent and LLM tool pipelines.
 *
 * The root export is what a user writes code with: tasks, flows, tools, `createBaton`, errors,
 * durations and the clock for tests. Everything else is behind a subpath that says what it is
 * (`baton/store`, `baton/schedule`, `baton/refs`, `baton/context`, `baton/agent`, `baton/budget`,
 * `baton/retry`, `baton/webhooks`, `baton/tools`, `baton/testing`, `baton/http`, …). The list of
 * names is pinned by src/public-api.test.ts, so growing it is a deliberate change.
 *
 * @example
 *   const baton = createBaton({ store: './baton.db' });
 *   const run = await baton.start(defineTask({ name: 'hello', run: async () => 'hi' }));
 *   console.log(await run.result());
 */

// Tasks, agent tasks, flows and configuration files.
export { type AgentTool, type AgentToolContext, agentTool } from './agent/index.ts';
export { type BatonConfig, defineConfig } from './config/index.ts';
// Per-task policies a task can pass: how to escalate, what to skip as time runs out.
export { type DegradationTable, defineDegradationTable } from './core/budget/index.ts';
// Errors users throw from a task or catch around Baton's calls.
export {
  BatonError,
  type BatonErrorOptions,
  type ErrorCode,
  ErrorCodes,
  isBatonError,
  NonRetriableError,
  RetryAfterError,
  ValidationError,
} from './core/errors.ts';
// Events a user follows (`baton.events`, `run.follow`) and the statuses they carry.
export { type BatonEvent, type BatonEventType, isEventType } from './core/events.ts';
export { defineEscalationPolicy, type EscalationPolicy, type TimeoutResult } from './core/retry/index.ts';
export {
  isTerminal,
  type RunStatus,
  RunStatuses,
  TerminalStatuses,
  type WaitReason,
} from './core/run-state.ts';
// A webhook receiver checks the signature with this (the rest of the channel is `baton/webhooks`).
export { type SignatureCheck, verifySignature } from './delivery/index.ts';
export {
  type AgentOutput,
  type AgentTaskOptions,
  Baton,
  type BatonOptions,
  type CheckpointInfo,
  type CheckpointView,
  createBaton,
  type DependencyOutput,
  type DurableOptions,
  defineAgentTask,
  defineFlow,
  defineTask,
  type FlowDefinition,
  type FlowOptions,
  type FlowStepOptions,
  type InvokeOptions,
  type InvokeOutcome,
  isFlowDefinition,
  isTaskDefinition,
  loadPlan,
  MAX_INPUT_BYTES,
  type ResearchOptions,
  type ResumeOptions,
  type ResumeResult,
  type RunHandle,
  type RunOutcome,
  readPlanFile,
  type ScheduleOptions,
  type SentSignal,
  type StartOptions,
  type TaskContext,
  type TaskDefinition,
  type TaskOptions,
  type TaskRetryOptions,
  type WaitForOptions,
  type WaitForResult,
  Worker,
  type WorkerOptions,
} from './runtime/index.ts';
// The JSON Schema a tool declares for its `schedule` argument.
export { SCHEDULE_JSON_SCHEMA } from './schedule/index.ts';
export type { Store } from './store/index.ts';
// Durations ('90s', '2h') and the clock (ManualClock drives tests; systemClock is the default).
export {
  type Clock,
  type Duration,
  formatDuration,
  MAX_DURATION_MS,
  ManualClock,
  parseDuration,
  systemClock,
  type TimerHandle,
} from './time/index.ts';
export {
  type DefineToolOptions,
  defineTool,
  httpToolHandler,
  type JsonSchemaObject,
  loadToolsDir,
  type ToolDefinition,
} from './tools/index.ts';
