import { ValidationError } from '../errors.ts';

/**
 * The escalation a human (or an unattended policy) answers when retries cannot save an attempt,
 * in the wording of protocol 001's two menus:
 *
 *   timeout   ("Step 2: Present Options"), shown when an attempt's partial results were accepted:
 *     Research agent timed out after 60 seconds.
 *     Partial results captured: 3 findings (normally expect 8-12)
 *
 *     [Retry with extended timeout] [Continue with partial results] [Skip research] [Different mode]
 *
 *   exhausted ("Escalation Path"), shown when all retries failed:
 *     Research agent failed after 3 attempts.
 *     Mode: External | Total time spent: 6 minutes
 *
 *     Options:
 *     [Continue without external research]
 *     [Manual research input]
 *     [Abandon planning session]
 *
 * The nouns ("Research agent", "research", "planning session") are configurable. "Different mode"
 * is offered only when another mode exists; after exhausted retries with findings in hand,
 * "Continue with partial results" is offered first. Counts use singular and plural ("1 finding").
 */

export const EscalationChoiceIds = [
  'retry_extended',
  'continue_partial',
  'skip',
  'different_mode',
  'manual_input',
  'abandon',
] as const;
export type EscalationChoice = (typeof EscalationChoiceIds)[number];

/** Each choice: its default label and what the engine must do ("Process User Choice"). */
export const ESCALATION_CHOICES: Readonly<
  Record<EscalationChoice, Readonly<{ label: string; effect: string }>>
> = Object.freeze({
  retry_extended: Object.freeze({
    label: 'Retry with extended timeout',
    effect: 'Double the timeout, re-spawn the agent',
  }),
  continue_partial: Object.freeze({
    label: 'Continue with partial results',
    effect: 'Mark the research incomplete, proceed',
  }),
  skip: Object.freeze({
    label: 'Skip {work}',
    effect: 'Set research_complete: false, go on to the next step',
  }),
  different_mode: Object.freeze({
    label: 'Different mode',
    effect: 'Take the new mode from the answer, spawn a fresh agent',
  }),
  manual_input: Object.freeze({
    label: 'Manual {work} input',
    effect: 'Use the answer’s input as the result, proceed',
  }),
  abandon: Object.freeze({ label: 'Abandon {session}', effect: 'End the run' }),
});

export interface EscalationWording {
  /** @default 'Research agent' */
  subject: string;
  /** @default 'research' */
  work: string;
  /** @default 'planning session' */
  session: string;
}

export const DEFAULT_ESCALATION_WORDING: Readonly<EscalationWording> = Object.freeze({
  subject: 'Research agent',
  work: 'research',
  session: 'planning session',
});

export type EscalationMenu = 'timeout' | 'exhausted';

export interface DecisionRequestInput {
  menu: EscalationMenu;
  /** Attempts made so far. */
  attempts: number;
  /** The last attempt's timeout; "retry with extended timeout" doubles it. */
  timeoutMs: number;
  /** Time spent on all attempts and waits. */
  totalMs: number;
  /** Findings captured (the partial result's length). */
  findings: number;
  expectedFindings?: { min: number; max: number };
  mode?: string;
  modeLabel?: string;
  /** Every known mode; the choices for "different mode" are these minus `mode`. */
  modeIds?: readonly string[];
  taskName?: string;
  wording?: Partial<EscalationWording>;
}

/**
 * A tool call waiting for a person's go-ahead (the AI SDK's tool approval): the question a run asks
 * from inside its body, answered like an escalation (person, API, MCP, dashboard) but with its own
 * two-choice menu. Its answer goes back to the body; it does not end or retry the run.
 */
export type ApprovalChoice = 'approve' | 'deny';

export interface DecisionRequest {
  /** `approval`: a question the body asked (`ctx.requestApproval`), not an escalation menu. */
  menu: EscalationMenu | 'approval';
  taskName?: string;
  mode?: string;
  attempts: number;
  timeoutMs: number;
  totalMs: number;
  findings: number;
  /** Modes a `different_mode` answer may name. */
  otherModes: readonly string[];
  choices: ReadonlyArray<{ id: EscalationChoice | ApprovalChoice; label: string }>;
  message: string;
}

/** The approve / deny question for a tool call (`menu: "approval"`). */
export function buildApprovalRequest(input: { message: string; taskName?: string }): DecisionRequest {
  if (typeof input.message !== 'string' || input.message.trim() === '')
    throw new ValidationError('message', 'a non-empty question', input.message);
  return {
    menu: 'approval',
    ...(input.taskName !== undefined ? { taskName: input.taskName } : {}),
    attempts: 0,
    timeoutMs: 0,
    totalMs: 0,
    findings: 0,
    otherModes: [],
    choices: [
      { id: 'approve', label: 'Approve' },
      { id: 'deny', label: 'Deny' },
    ],
    message: input.message,
  };
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function seconds(ms: number): string {
  return plural(Math.round(ms / 100) / 10, 'second');
}

function timeSpent(ms: number): string {
  return ms < 60_000 ? seconds(ms) : plural(Math.round(ms / 60_000), 'minute');
}

function count(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0) throw new ValidationError(field, 'an integer ≥ 0', value);
  return value;
}

export function buildDecisionRequest(input: DecisionRequestInput): DecisionRequest {
  const wording = { ...DEFAULT_ESCALATION_WORDING, ...input.wording };
  const findings = count(input.findings, 'findings');
  const attempts = count(input.attempts, 'attempts');
  if (!(input.timeoutMs > 0))
    throw new ValidationError('timeoutMs', 'a number of milliseconds > 0', input.timeoutMs);
  if (!(input.totalMs >= 0))
    throw new ValidationError('totalMs', 'a number of milliseconds ≥ 0', input.totalMs);
  const e = input.expectedFindings;
  if (e !== undefined && count(e.min, 'expectedFindings.min') > count(e.max, 'expectedFindings.max'))
    throw new ValidationError('expectedFindings.max', `an integer ≥ expectedFindings.min (${e.min})`, e.max);
  const otherModes = (input.modeIds ?? []).filter((m) => m !== input.mode);
  const label = (id: EscalationChoice) =>
    ESCALATION_CHOICES[id].label.replace('{work}', wording.work).replace('{session}', wording.session);

  let choices: Array<{ id: EscalationChoice; label: string }>;
  let message: string;
  if (input.menu === 'timeout') {
    choices = (['retry_extended', 'continue_partial', 'skip', 'different_mode'] as const)
      .filter((id) => id !== 'different_mode' || otherModes.length > 0)
      .map((id) => ({ id, label: label(id) }));
    const expected = e ? ` (normally expect ${e.min === e.max ? e.min : `${e.min}-${e.max}`})` : '';
    message =
      `${wording.subject} timed out after ${seconds(input.timeoutMs)}.\n` +
      `Partial results captured: ${plural(findings, 'finding')}${expected}\n\n` +
      choices.map((c) => `[${c.label}]`).join(' ');
  } else if (input.menu === 'exhausted') {
    // "Dual Research" already names the work: "without dual research", not "dual research research".
    const modeWork = input.modeLabel?.toLowerCase();
    const without = !modeWork
      ? wording.work
      : modeWork.endsWith(wording.work)
        ? modeWork
        : `${modeWork} ${wording.work}`;
    choices = [
      ...(findings > 0 ? [{ id: 'continue_partial' as const, label: label('continue_partial') }] : []),
      { id: 'skip', label: `Continue without ${without}` },
      { id: 'manual_input', label: label('manual_input') },
      { id: 'abandon', label: label('abandon') },
    ];
    const mode = input.modeLabel ? `Mode: ${input.modeLabel} | ` : '';
    message =
      `${wording.subject} failed after ${plural(attempts, 'attempt')}.\n` +
      `${mode}Total time spent: ${timeSpent(input.totalMs)}\n\n` +
      `Options:\n${choices.map((c) => `[${c.label}]`).join('\n')}`;
  } else {
    throw new ValidationError('menu', '"timeout" or "exhausted"', input.menu);
  }
  return {
    menu: input.menu,
    ...(input.taskName !== undefined ? { taskName: input.taskName } : {}),
    ...(input.mode !== undefined ? { mode: input.mode } : {}),
    attempts,
    timeoutMs: input.timeoutMs,
    totalMs: input.totalMs,
    findings,
    otherModes,
    choices,
    message,
  };
}
