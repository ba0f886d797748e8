/**
 * The tracked timeout state of a flow (protocol 001) from its steps' rows: each step's mode, how it
 * ended, and the timeout and outcome of each of its attempts (kept in the step's meta).
 */

import { type StepFinalStatus, type StepOutcome, type TimeoutState, trackTimeouts } from './retry/index.ts';
import type { RunStatus } from './run-state.ts';

export interface StepRowForTimeouts {
  name: string;
  status: RunStatus;
  attempt: number;
  options: Record<string, unknown>;
  meta: Record<string, unknown>;
}

export interface AttemptLogEntry {
  attempt: number;
  timeoutMs: number | null;
  timedOut: boolean;
}

function finalStatusOf(row: StepRowForTimeouts): StepFinalStatus | undefined {
  switch (row.status) {
    case 'succeeded':
      return 'completed';
    case 'partial':
      return row.meta.skipped === true ? 'skipped' : 'partial';
    case 'failed':
    case 'cancelled':
    case 'expired':
      return 'failed';
    default:
      return undefined;
  }
}

/**
 * Agent steps that started and ended count; steps still running or never started do not (yet).
 * Steps the engine marked `agent: false` (tools, an aggregator: no research mode or agent profile)
 * are not agents in protocol 001's sense; rows from before the mark count as they did.
 */
export function flowTimeoutState(rows: readonly StepRowForTimeouts[]): TimeoutState {
  const outcomes: StepOutcome[] = [];
  for (const row of rows) {
    const finalStatus = finalStatusOf(row);
    if (!finalStatus || row.attempt === 0 || row.meta.agent === false) continue;
    const log = Array.isArray(row.meta.attemptsLog) ? (row.meta.attemptsLog as AttemptLogEntry[]) : [];
    const mode =
      typeof row.meta.mode === 'string'
        ? row.meta.mode
        : typeof row.options.mode === 'string'
          ? row.options.mode
          : row.name;
    // Steps finished outside the engine's attempt bookkeeping still count their claims as attempts.
    const attempts =
      log.length > 0
        ? log.map((a) => ({ timeoutMs: a.timeoutMs ?? 0, timedOut: a.timedOut }))
        : Array.from({ length: row.attempt }, () => ({ timeoutMs: 0, timedOut: false }));
    outcomes.push({ mode, finalStatus, attempts });
  }
  return trackTimeouts(outcomes);
}
