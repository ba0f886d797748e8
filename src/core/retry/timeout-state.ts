import { ValidationError } from '../errors.ts';

/**
 * The tracked timeout state of protocol 001 ("Tracking Timeout State"), built by a pure reducer
 * from one outcome per agent step (a step is one agent; its retries are attempts of the same step).
 *
 * - agents_spawned:   steps seen.
 * - agents_completed: steps whose final status is `completed` (also after a timed-out attempt).
 * - agents_timed_out: steps with at least one timed-out attempt = timeout_details.length; a step
 *                     that timed out and then completed on a retry counts here and as completed.
 * - timeout_details:  per such step, `timeout_at` = the timeout in seconds of its first attempt
 *                     that timed out (the mode's timeout in the protocol's example: external, 120),
 *                     `retries` = attempts − 1, `final_status` = how the step ended.
 * - overall_status:   `complete` when every step completed (also with no steps: nothing is
 *                     missing); `failed` when no step produced anything usable (all failed or
 *                     skipped); otherwise `partial`.
 * The state object is the protocol's inner `research` object; the caller nests it under its key.
 */

export const StepFinalStatuses = ['completed', 'partial', 'skipped', 'failed'] as const;
export type StepFinalStatus = (typeof StepFinalStatuses)[number];

export const OverallStatuses = ['complete', 'partial', 'failed'] as const;
export type OverallStatus = (typeof OverallStatuses)[number];

export interface StepAttemptOutcome {
  timeoutMs: number;
  timedOut: boolean;
}

export interface StepOutcome {
  /** The step's research mode (or the task's name when it has none). */
  mode: string;
  finalStatus: StepFinalStatus;
  attempts: readonly StepAttemptOutcome[];
}

export interface TimeoutDetail {
  mode: string;
  timeout_at: number;
  retries: number;
  final_status: StepFinalStatus;
}

export interface TimeoutState {
  agents_spawned: number;
  agents_completed: number;
  agents_timed_out: number;
  timeout_details: TimeoutDetail[];
  overall_status: OverallStatus;
}

/** The state before any step: nothing spawned, nothing missing. */
export function emptyTimeoutState(): TimeoutState {
  return {
    agents_spawned: 0,
    agents_completed: 0,
    agents_timed_out: 0,
    timeout_details: [],
    overall_status: 'complete',
  };
}

function stepOverall(status: StepFinalStatus): OverallStatus {
  if (status === 'completed') return 'complete';
  return status === 'partial' ? 'partial' : 'failed';
}

/** Adds one step's outcome; returns a new state and leaves `state` as it was. */
export function reduceTimeoutState(
  state: Readonly<TimeoutState>,
  step: StepOutcome,
  field = 'step',
): TimeoutState {
  if (!(StepFinalStatuses as readonly string[]).includes(step.finalStatus))
    throw new ValidationError(
      `${field}.finalStatus`,
      `one of ${StepFinalStatuses.map((s) => `"${s}"`).join(', ')}`,
      step.finalStatus,
    );
  if (!Array.isArray(step.attempts) || step.attempts.length === 0)
    throw new ValidationError(`${field}.attempts`, 'a non-empty array', step.attempts);
  const firstTimeout = step.attempts.find((a) => a.timedOut);
  const own = stepOverall(step.finalStatus);
  // "All complete", "none usable", "otherwise partial" combine pairwise: equal stays, mixed is partial.
  const overall = state.agents_spawned === 0 || state.overall_status === own ? own : 'partial';
  return {
    agents_spawned: state.agents_spawned + 1,
    agents_completed: state.agents_completed + (step.finalStatus === 'completed' ? 1 : 0),
    agents_timed_out: state.agents_timed_out + (firstTimeout ? 1 : 0),
    timeout_details: firstTimeout
      ? [
          ...state.timeout_details,
          {
            mode: step.mode,
            timeout_at: firstTimeout.timeoutMs / 1000,
            retries: step.attempts.length - 1,
            final_status: step.finalStatus,
          },
        ]
      : [...state.timeout_details],
    overall_status: overall,
  };
}

export function trackTimeouts(steps: readonly StepOutcome[]): TimeoutState {
  let state = emptyTimeoutState();
  steps.forEach((step, i) => {
    state = reduceTimeoutState(state, step, `steps[${i}]`);
  });
  return state;
}
