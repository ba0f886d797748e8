import { BatonError, ValidationError } from '../errors.ts';
import type { DecisionRequest, EscalationChoice } from './escalation-request.ts';
import type { StepFinalStatus } from './timeout-state.ts';

/**
 * Answers to an escalation: checking one, turning it into what the engine must do, and answering
 * by policy when no one is there.
 *
 * An answer is `{ choice }`, plus `mode` for `different_mode` (one of the request's `otherModes`)
 * and `input` for `manual_input` (the research the human supplies: any JSON value but null, used
 * as the step's result). Only the choices the request offers are accepted.
 */

export type DecisionAnswer =
  | { choice: 'retry_extended' | 'continue_partial' | 'skip' | 'abandon' }
  | { choice: 'different_mode'; mode: string }
  | { choice: 'manual_input'; input: unknown };

function invalid(field: string, expected: string, received: unknown): ValidationError {
  return new ValidationError(field, expected, received, { code: 'DECISION_INVALID' });
}

/** Checks an answer against the request; returns it reduced to the fields its choice uses. */
export function validateDecision(request: DecisionRequest, answer: unknown): DecisionAnswer {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw invalid('answer', 'an object like { "choice": "skip" }', answer);
  const { choice, mode, input } = answer as { choice?: unknown; mode?: unknown; input?: unknown };
  const offered = request.choices.map((c) => c.id);
  if (typeof choice !== 'string' || !(offered as string[]).includes(choice))
    throw invalid('answer.choice', `one of ${offered.map((c) => `"${c}"`).join(', ')}`, choice);
  if (choice === 'different_mode') {
    if (typeof mode !== 'string' || !request.otherModes.includes(mode))
      throw invalid('answer.mode', `one of ${request.otherModes.map((m) => `"${m}"`).join(', ')}`, mode);
    return { choice, mode };
  }
  if (choice === 'manual_input') {
    if (input === undefined || input === null)
      throw invalid('answer.input', 'the research to use (any JSON value but null)', input);
    return { choice, input };
  }
  return { choice: choice as 'retry_extended' | 'continue_partial' | 'skip' | 'abandon' };
}

/** What the engine does with a checked answer ("Process User Choice"). */
export type DecisionOutcome =
  /** Re-spawn the same agent under `timeoutMs` (the last timeout doubled). */
  | { action: 'retry'; timeoutMs: number }
  /** A fresh agent in `mode`, with that mode's timeouts and a new retry count. */
  | { action: 'restart'; mode: string }
  /**
   * The step ends and the flow goes on. `usePartial`: its result is the partial findings;
   * `input`: its result is the manual input; `researchComplete: false` marks it incomplete.
   */
  | {
      action: 'finish';
      finalStatus: StepFinalStatus;
      researchComplete: boolean;
      usePartial: boolean;
      input?: unknown;
    }
  /** The run ends. */
  | { action: 'abandon' };

export const EXTENDED_TIMEOUT_FACTOR = 2;

export function resolveDecision(
  request: DecisionRequest,
  answer: unknown,
  extendedTimeoutFactor = EXTENDED_TIMEOUT_FACTOR,
): DecisionOutcome {
  const checked = validateDecision(request, answer);
  switch (checked.choice) {
    case 'retry_extended':
      return { action: 'retry', timeoutMs: request.timeoutMs * extendedTimeoutFactor };
    case 'different_mode':
      return { action: 'restart', mode: checked.mode };
    case 'continue_partial':
      return { action: 'finish', finalStatus: 'partial', researchComplete: false, usePartial: true };
    case 'skip':
      return { action: 'finish', finalStatus: 'skipped', researchComplete: false, usePartial: false };
    case 'manual_input':
      return {
        action: 'finish',
        finalStatus: 'completed',
        researchComplete: true,
        usePartial: false,
        input: checked.input,
      };
    case 'abandon':
      return { action: 'abandon' };
  }
}

/** Choices a policy can make without supplying anything (a mode or an input). */
export type PolicyFallback = Extract<EscalationChoice, 'skip' | 'abandon' | 'retry_extended'>;

/** How a timed-out run is escalated to a person and what the unattended policy does. */
export interface EscalationPolicy {
  /** Continue with the partial results when at least this many findings were captured. @default 1 */
  minFindings: number;
  /** Otherwise the first of these that the request offers. @default ['skip', 'abandon'] */
  otherwise: readonly PolicyFallback[];
}

/**
 * The default for unattended runs: keep what was found (continue with partial results if there is
 * at least one finding), else skip the step so the flow can still finish; abandon only when skip
 * is not offered. A run never stalls waiting for a human who is not there.
 */
export const DEFAULT_ESCALATION_POLICY: Readonly<EscalationPolicy> = Object.freeze({
  minFindings: 1,
  otherwise: Object.freeze(['skip', 'abandon'] as const),
});

const FALLBACKS: readonly string[] = ['skip', 'abandon', 'retry_extended'];

/** Checks and completes an escalation policy: who decides when an attempt times out, and what happens unattended. */
export function defineEscalationPolicy(
  options: Partial<EscalationPolicy> = {},
  field = 'escalation',
): EscalationPolicy {
  const minFindings = options.minFindings ?? DEFAULT_ESCALATION_POLICY.minFindings;
  if (!Number.isInteger(minFindings) || minFindings < 0)
    throw new ValidationError(`${field}.minFindings`, 'an integer ≥ 0', minFindings, {
      code: 'INVALID_OPTION',
    });
  const otherwise = options.otherwise ?? DEFAULT_ESCALATION_POLICY.otherwise;
  if (!Array.isArray(otherwise) || otherwise.length === 0)
    throw new ValidationError(`${field}.otherwise`, 'a non-empty array', otherwise, {
      code: 'INVALID_OPTION',
    });
  otherwise.forEach((c: unknown, i) => {
    if (typeof c !== 'string' || !FALLBACKS.includes(c))
      throw new ValidationError(
        `${field}.otherwise[${i}]`,
        `one of ${FALLBACKS.map((f) => `"${f}"`).join(', ')}`,
        c,
        {
          code: 'INVALID_OPTION',
        },
      );
  });
  return Object.freeze({ minFindings, otherwise: Object.freeze([...otherwise]) });
}

/** The answer a policy gives; it always passes `validateDecision` for the same request. */
export function decideByPolicy(
  request: DecisionRequest,
  policy: Readonly<EscalationPolicy> = DEFAULT_ESCALATION_POLICY,
): DecisionAnswer {
  const offers = (id: EscalationChoice) => request.choices.some((c) => c.id === id);
  if (request.findings >= policy.minFindings && offers('continue_partial'))
    return { choice: 'continue_partial' };
  const fallback = policy.otherwise.find(offers);
  if (fallback === undefined)
    throw new BatonError(
      'DECISION_INVALID',
      `escalation policy cannot answer: none of ${policy.otherwise.join(', ')} is offered (${request.choices.map((c) => c.id).join(', ')})`,
      { data: { offered: request.choices.map((c) => c.id), otherwise: [...policy.otherwise] } },
    );
  return { choice: fallback };
}
