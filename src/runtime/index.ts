/** The engine: tasks, flows, runs, attempts, workers, leases, resume. */
export { Baton, createBaton, type RunHandle, type RunOutcome } from './baton.ts';
export type { BatonOptions, ScheduleOptions } from './baton-options.ts';
export { type EndedByAnswer, endedByAnswer, type OpenDecision } from './decisions.ts';
export { type AgentOutput, type AgentTaskOptions, defineAgentTask } from './define-agent-task.ts';
export {
  defineFlow,
  type FlowDefinition,
  type FlowOptions,
  type FlowStepOptions,
  isFlowDefinition,
  loadPlan,
  readPlanFile,
} from './define-flow.ts';
export {
  defineTask,
  isTaskDefinition,
  parseTaskInput,
  type TaskDefinition,
  type TaskOptions,
  type TaskRetryOptions,
} from './define-task.ts';
export type { DeliveryTargets } from './delivery-routes.ts';
export type { Delivered } from './delivery-service.ts';
export type { Engine } from './engine.ts';
export {
  type DeliveryBoard,
  type DeliveryEntry,
  type DeliveryState,
  decisionInbox,
  deliveryBoard,
  type InboxDecision,
} from './inbox.ts';
export type { InvokeOptions, InvokeOutcome } from './invoke-child.ts';
export type { ResearchOptions } from './research-options.ts';
export type { ResumeOptions, ResumeResult } from './resume-run.ts';
export { type AnsweredDecision, type RunMeta, runMetaOf } from './run-meta.ts';
export { type RunOptions, runOptionsOf } from './run-options.ts';
export type { RunSchedule } from './scheduled-delivery.ts';
export type { SentSignal } from './send-signal.ts';
export { MAX_INPUT_BYTES, type StartOptions } from './start-run.ts';
export type {
  ApprovalAnswer,
  ApprovalQuestion,
  CheckpointInfo,
  CheckpointView,
  DependencyOutput,
  DurableOptions,
  TaskContext,
  WaitForOptions,
  WaitForResult,
} from './task-context.ts';
export type { FollowOptions } from './watch-run.ts';
export { Worker, type WorkerOptions } from './worker.ts';
