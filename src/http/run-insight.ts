/**
 * What the dashboard (and any client) needs beside a stored run to draw it: the budget as the
 * engine judges it (time status, mode, the warning / critical thresholds in remaining time), and the
 * retry plan (attempt n of N, each attempt's timeout, the waits between them). The rules are core's
 * (`timeStatusFor`, the compiled retry policy); this only applies them to a run at an instant.
 */
import {
  DEFAULT_TIME_THRESHOLDS,
  resolveThresholds,
  type TimeStatus,
  type TimeThresholds,
  timeStatusFor,
} from '../core/index.ts';
import { type Baton, runMetaOf, runOptionsOf } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';

export interface BudgetView {
  budgetMs: number;
  /** When the budget started (deadline − budget); null before the first claim. */
  startedAt: number | null;
  deadlineAt: number | null;
  /** Time left at `now` (or when the run ended); negative once the deadline has passed. */
  remainingMs: number | null;
  /** The protocol's time status at that moment; null before the first claim. */
  status: TimeStatus | null;
  /** Below this much time left the run is in `warning`. */
  warningBelowMs: number;
  /** Below this much time left the run is `time_critical` (ACCELERATE mode). */
  criticalBelowMs: number;
}

export interface AttemptPlan {
  /** Attempts the retry policy allows (attempt n of N). */
  maxAttempts: number;
  /** Each attempt's timeout, in order (×2, ×3 growth). */
  timeoutsMs: number[];
  /** The wait before each retry (5 s, 15 s). */
  backoffMs: number[];
}

export interface RunInsight {
  /** normal, accelerate (time_critical) or fast (fast mode: halved timeouts, one retry). */
  mode: 'normal' | 'accelerate' | 'fast';
  budget: BudgetView | null;
  attempts: AttemptPlan | null;
}

function thresholdsOf(baton: Baton, run: RunRecord): Readonly<TimeThresholds> {
  const own = run.kind === 'task' ? baton.internals.tasks.get(run.name)?.thresholds : undefined;
  try {
    return own ? resolveThresholds(own) : DEFAULT_TIME_THRESHOLDS;
  } catch {
    return DEFAULT_TIME_THRESHOLDS;
  }
}

export function budgetView(run: RunRecord, now: number, t: Readonly<TimeThresholds>): BudgetView | null {
  if (run.budgetMs === null || run.budgetMs <= 0) return null;
  const budgetMs = run.budgetMs;
  const at = run.finishedAt ?? now;
  const remainingMs = run.deadlineAt === null ? null : run.deadlineAt - at;
  return {
    budgetMs,
    startedAt: run.deadlineAt === null ? null : run.deadlineAt - budgetMs,
    deadlineAt: run.deadlineAt,
    remainingMs,
    status: remainingMs === null ? null : timeStatusFor(remainingMs / 1000, budgetMs / 1000, t),
    warningBelowMs: Math.max(t.warningSeconds * 1000, t.warningFraction * budgetMs),
    criticalBelowMs: t.criticalSeconds * 1000,
  };
}

function attemptPlan(baton: Baton, run: RunRecord): AttemptPlan | null {
  if (run.kind !== 'task') return null;
  const task = baton.internals.tasks.get(run.name);
  if (!task) return null;
  const fast = runOptionsOf(run).fast === true;
  const mode = runMetaOf(run).modeOverride ?? runOptionsOf(run).mode ?? task.mode;
  try {
    const policy = task.policy({ mode, fast });
    const timeoutsMs = Array.from({ length: policy.maxAttempts }, (_, i) => policy.attemptTimeoutMs(i + 1));
    const backoffMs = Array.from({ length: Math.max(0, policy.maxAttempts - 1) }, (_, i) =>
      policy.backoffMs(i + 1),
    );
    return { maxAttempts: policy.maxAttempts, timeoutsMs, backoffMs };
  } catch {
    return null;
  }
}

export function runInsight(baton: Baton, run: RunRecord, now: number): RunInsight {
  const budget = budgetView(run, now, thresholdsOf(baton, run));
  const active = run.finishedAt === null;
  const mode =
    runOptionsOf(run).fast === true
      ? 'fast'
      : active && budget?.status === 'time_critical'
        ? 'accelerate'
        : 'normal';
  return { mode, budget, attempts: attemptPlan(baton, run) };
}
