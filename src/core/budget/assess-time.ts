import { ValidationError } from '../errors.ts';
import { formatIsoSeconds } from './iso-time.ts';
import { roundTo2 } from './round-like-python.ts';

/**
 * The time assessment saved at every checkpoint (protocol 000), field for field as the protocol's
 * Python computes it: seconds truncated with `int()`, minutes floored with `// 60`, percentages and
 * rates rounded with `round(x, 2)`. `remaining_seconds` goes negative once the budget is overrun
 * (as in the Python), so a late checkpoint shows by how much; "-2 minutes" reads as two minutes over.
 *
 * Status, mode and degradation level all come from one comparison of the exact remaining time with
 * the thresholds, so they never disagree:
 *   remaining <  criticalSeconds                                        → time_critical (ACCELERATE)
 *   remaining <  warningSeconds or remaining < warningFraction × budget → warning
 *   otherwise                                                           → on_track
 * The Python's status line says `> 300` is on track, i.e. exactly 300 s is critical, while its own
 * ACCELERATE test and `should_skip_tool` use `< 300`; Baton uses `<` everywhere, so exactly 300 s
 * left is `warning`. Only `on_track`/`time_critical` exist in the Python's status; `warning` is the
 * band its `should_skip_tool` and degradation table define (< 10 minutes or < 25 % of the budget).
 */

export const TimeStatuses = ['on_track', 'warning', 'time_critical'] as const;
export type TimeStatus = (typeof TimeStatuses)[number];

export const TimeModes = ['NORMAL', 'ACCELERATE'] as const;
export type TimeMode = (typeof TimeModes)[number];

export interface TimeAssessment {
  start_time: string;
  current_time: string;
  elapsed_seconds: number;
  elapsed_formatted: string;
  remaining_seconds: number;
  remaining_formatted: string;
  budget_seconds: number;
  budget_formatted: string;
  progress_percentage: number;
  time_status: TimeStatus;
  items_per_minute: number;
}

export interface TimeThresholds {
  /** Below this many seconds left: `time_critical`, ACCELERATE mode. @default 300 */
  criticalSeconds: number;
  /** Below this many seconds left: `warning`. @default 600 */
  warningSeconds: number;
  /** Below this fraction of the budget left: `warning`. @default 0.25 */
  warningFraction: number;
}

export const DEFAULT_TIME_THRESHOLDS: Readonly<TimeThresholds> = Object.freeze({
  criticalSeconds: 300,
  warningSeconds: 600,
  warningFraction: 0.25,
});

export interface AssessTimeInput {
  /** When the budget started, epoch ms (recorded; survives resume). */
  startMs: number;
  /** Now, epoch ms, from the injected clock. */
  nowMs: number;
  /** The whole budget in ms; > 0. */
  budgetMs: number;
  /** Items finished so far, for `items_per_minute`. */
  itemsAnalyzed: number;
  /** @default DEFAULT_TIME_THRESHOLDS */
  thresholds?: Partial<TimeThresholds>;
}

/** Checks thresholds once; assessTime calls it only when custom thresholds are passed. */
export function resolveThresholds(
  thresholds: Partial<TimeThresholds> | undefined,
  field = 'thresholds',
): Readonly<TimeThresholds> {
  if (thresholds === undefined) return DEFAULT_TIME_THRESHOLDS;
  const t = { ...DEFAULT_TIME_THRESHOLDS, ...thresholds };
  if (!(t.criticalSeconds >= 0) || !Number.isFinite(t.criticalSeconds))
    throw new ValidationError(`${field}.criticalSeconds`, 'a finite number ≥ 0', t.criticalSeconds);
  if (!(t.warningSeconds >= t.criticalSeconds) || !Number.isFinite(t.warningSeconds))
    throw new ValidationError(
      `${field}.warningSeconds`,
      `a finite number ≥ criticalSeconds (${t.criticalSeconds})`,
      t.warningSeconds,
    );
  if (!(t.warningFraction >= 0 && t.warningFraction < 1))
    throw new ValidationError(
      `${field}.warningFraction`,
      'a number from 0 up to (not including) 1',
      t.warningFraction,
    );
  return t;
}

/** `time_status` for an exact remaining time; see the header for the rule. */
export function timeStatusFor(
  remainingSeconds: number,
  budgetSeconds: number,
  t: Readonly<TimeThresholds> = DEFAULT_TIME_THRESHOLDS,
): TimeStatus {
  if (remainingSeconds < t.criticalSeconds) return 'time_critical';
  if (remainingSeconds < t.warningSeconds || remainingSeconds < t.warningFraction * budgetSeconds)
    return 'warning';
  return 'on_track';
}

/** Python's f"{int(s // 60)} minutes": floored, and "minutes" even for 1 (agents parse it as is). */
export function formatMinutes(seconds: number): string {
  return `${Math.floor(seconds / 60) || 0} minutes`;
}

function requireNumber(value: number, field: string, expected: string, ok: boolean): void {
  if (!ok) throw new ValidationError(field, expected, value);
}

/**
 * Assesses elapsed and remaining time against a budget. Pure: time comes in as numbers.
 * @example assessTime({ startMs, nowMs: startMs + 1_800_000, budgetMs: 4_500_000, itemsAnalyzed: 3 })
 *   // elapsed 1800 "30 minutes", remaining 2700 "45 minutes", progress 40, on_track, 0.1 items/min
 */
export function assessTime(input: AssessTimeInput): TimeAssessment {
  const { startMs, nowMs, budgetMs, itemsAnalyzed } = input;
  requireNumber(startMs, 'startMs', 'finite epoch milliseconds', Number.isFinite(startMs));
  requireNumber(nowMs, 'nowMs', 'finite epoch milliseconds', Number.isFinite(nowMs));
  requireNumber(
    budgetMs,
    'budgetMs',
    'a finite number of milliseconds > 0',
    budgetMs > 0 && budgetMs < Infinity,
  );
  requireNumber(
    itemsAnalyzed,
    'itemsAnalyzed',
    'a count ≥ 0',
    itemsAnalyzed >= 0 && itemsAnalyzed < Infinity,
  );
  const thresholds =
    input.thresholds === undefined ? DEFAULT_TIME_THRESHOLDS : resolveThresholds(input.thresholds);

  // Same operations in the same order as the Python, so the floats match it.
  const elapsed = (nowMs - startMs) / 1000;
  const budget = budgetMs / 1000;
  const remaining = budget - elapsed;
  return {
    start_time: formatIsoSeconds(startMs, 'startMs'),
    current_time: formatIsoSeconds(nowMs, 'nowMs'),
    elapsed_seconds: Math.trunc(elapsed) || 0,
    elapsed_formatted: formatMinutes(elapsed),
    remaining_seconds: Math.trunc(remaining) || 0,
    remaining_formatted: formatMinutes(remaining),
    budget_seconds: budget,
    budget_formatted: formatMinutes(budget),
    progress_percentage: roundTo2((elapsed / budget) * 100),
    time_status: timeStatusFor(remaining, budget, thresholds),
    items_per_minute: elapsed > 0 ? roundTo2(itemsAnalyzed / (elapsed / 60)) : 0,
  };
}

/** NORMAL or ACCELERATE: ACCELERATE exactly when the status is `time_critical` (< 300 s left). */
export function timeMode(assessment: Pick<TimeAssessment, 'time_status'>): TimeMode {
  return assessment.time_status === 'time_critical' ? 'ACCELERATE' : 'NORMAL';
}

export interface ModeChange {
  from: TimeMode;
  to: TimeMode;
}

/**
 * The mode change between two assessments, or `undefined` when there is none. With no previous
 * assessment the run starts in NORMAL, so a first assessment that is already critical is a change.
 */
export function detectModeChange(
  previous: Pick<TimeAssessment, 'time_status'> | undefined,
  next: Pick<TimeAssessment, 'time_status'>,
): ModeChange | undefined {
  const from = previous === undefined ? 'NORMAL' : timeMode(previous);
  const to = timeMode(next);
  return from === to ? undefined : { from, to };
}
