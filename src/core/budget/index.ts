/**
 * Time budgets as pure rules (protocol 000): the time assessment saved at every checkpoint, the
 * checkpoint record, NORMAL/ACCELERATE modes, the degradation table behind `ctx.tool`, and when
 * to checkpoint. No I/O and no clock: times come in as epoch milliseconds.
 */
export {
  type AssessTimeInput,
  assessTime,
  DEFAULT_TIME_THRESHOLDS,
  detectModeChange,
  formatMinutes,
  type ModeChange,
  resolveThresholds,
  type TimeAssessment,
  type TimeMode,
  TimeModes,
  type TimeStatus,
  TimeStatuses,
  type TimeThresholds,
  timeMode,
  timeStatusFor,
} from './assess-time.ts';
export {
  AGENT_PROFILES,
  type AgentProfile,
  type CheckpointMoment,
  CheckpointMoments,
  type CheckpointPolicy,
  type CheckpointPolicyOptions,
  createCheckpointPolicy,
  DEFAULT_AGENT_TIMEOUT_MS,
  LONG_TOOL_CALL_BUDGET_FRACTION,
  LONG_TOOL_CALL_MS,
} from './checkpoint-policy.ts';
export {
  buildCheckpointRecord,
  type CheckpointRecord,
  type CheckpointRecordInput,
  type CheckpointStatus,
  CheckpointStatuses,
  checkpointId,
  checkpointRecordSchema,
  timeAssessmentSchema,
} from './checkpoint-record.ts';
export {
  DEFAULT_DEGRADATION_TABLE,
  type DegradationAction,
  DegradationActions,
  type DegradationDecision,
  type DegradationLevel,
  DegradationLevels,
  type DegradationRule,
  type DegradationRules,
  type DegradationTable,
  type DegradationTableOptions,
  defineDegradationTable,
  degradationLevel,
  LEVEL_GUIDANCE,
  shouldSkip,
} from './degradation.ts';
export { formatIsoSeconds } from './iso-time.ts';
export { roundTo2 } from './round-like-python.ts';
