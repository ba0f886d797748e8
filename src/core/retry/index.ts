/**
 * Timeouts, retries and escalation as pure rules (protocol 001): per-mode timeouts and fast mode,
 * the compiled retry policy the engine asks after every attempt, the partial result of a timed-out
 * attempt, the escalation request and its answers, and the tracked timeout state.
 */
export { type Answerer, answererLabel, answererOf } from './answerer.ts';
export {
  DEFAULT_ESCALATION_POLICY,
  type DecisionAnswer,
  type DecisionOutcome,
  decideByPolicy,
  defineEscalationPolicy,
  type EscalationPolicy,
  EXTENDED_TIMEOUT_FACTOR,
  type PolicyFallback,
  resolveDecision,
  validateDecision,
} from './decision.ts';
export {
  type ApprovalChoice,
  buildApprovalRequest,
  buildDecisionRequest,
  DEFAULT_ESCALATION_WORDING,
  type DecisionRequest,
  type DecisionRequestInput,
  ESCALATION_CHOICES,
  type EscalationChoice,
  EscalationChoiceIds,
  type EscalationMenu,
  type EscalationWording,
} from './escalation-request.ts';
export {
  FAST_MODE_TIMEOUT_FACTOR,
  lookupMode,
  type ModeOptions,
  modeTimeoutMs,
  RESEARCH_MODES,
  type ResearchMode,
  resolveTimeouts,
  type TimeoutTable,
  type TimeoutTableOptions,
} from './mode-timeouts.ts';
export {
  compileRetryPolicy,
  DEFAULT_RETRY,
  type EscalationReason,
  EscalationReasons,
  FAST_MODE_WARNING,
  FAST_RETRY,
  fastModeWarning,
  type NextStep,
  type NextStepInput,
  type RetryOptions,
  type RetryPolicy,
} from './retry-policy.ts';
export {
  type TimeoutResult,
  type TimeoutResultInput,
  timeoutResult,
  timeoutResultSchema,
} from './timeout-result.ts';
export {
  emptyTimeoutState,
  type OverallStatus,
  OverallStatuses,
  reduceTimeoutState,
  type StepAttemptOutcome,
  type StepFinalStatus,
  StepFinalStatuses,
  type StepOutcome,
  type TimeoutDetail,
  type TimeoutState,
  trackTimeouts,
} from './timeout-state.ts';
