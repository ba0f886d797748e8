/**
 * The estimated time remaining of a resumable job, from what its invocations reported.
 *
 * - When the job's turn limit is known (`maxTurns`): the rate so far, turns per millisecond of
 *   invocation time, applied to the turns left: `(maxTurns − turns) / (turns / invocationMs)`.
 *   An agent may answer before its limit, so this is an upper bound on the work left.
 * - Otherwise, from elapsed time: a job that needed another invocation is assumed to need one more
 *   of the average length so far (`invocationMs / invocations`). A rough guess, not a bound.
 *
 * Either way the backoff before the next resume is added. Before the first invocation has
 * reported there is nothing to go on, and the estimate is null.
 */

export interface EstimateInput {
  /** Turns done in all invocations so far (null when the task is not an agent). */
  turns: number | null;
  /** The agent's turn limit, if known. */
  maxTurns: number | undefined;
  /** Invocations that ended (timed out) so far. */
  invocations: number;
  /** Their summed `durationMs`. */
  invocationMs: number;
  /** The wait before the next resume. */
  nextDelayMs: number;
}

export function estimateRemainingMs(input: EstimateInput): number | null {
  const { turns, maxTurns, invocations, invocationMs, nextDelayMs } = input;
  if (invocations <= 0 || invocationMs <= 0) return null;
  if (maxTurns !== undefined && turns !== null && turns > 0) {
    const left = Math.max(0, maxTurns - turns);
    return Math.round(nextDelayMs + left / (turns / invocationMs));
  }
  return Math.round(nextDelayMs + invocationMs / invocations);
}
