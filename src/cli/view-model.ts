/**
 * Folds a run's events into one row per step (or one row for a single task): status, attempts,
 * elapsed time, checkpoints, progress. Pure, so the live view, the plain-line view and `show`
 * all read the same thing.
 */
import type { BatonEvent } from '../core/index.ts';
import { formatDuration } from '../time/index.ts';

export interface StepRow {
  runId: string;
  label: string;
  task: string;
  status: string;
  attempt: number;
  startedAt: number | null;
  endedAt: number | null;
  checkpoints: number;
  done: number | null;
  total: number | null;
  findings: number;
  note: string;
  /** The protocol's time status at the last checkpoint (on_track, warning, time_critical). */
  timeStatus: string | null;
  remainingSeconds: number | null;
}

export interface RunView {
  rootId: string;
  rows: Map<string, StepRow>;
  ended: boolean;
  status: string;
}

export function newRunView(rootId: string): RunView {
  return { rootId, rows: new Map(), ended: false, status: 'queued' };
}

const ENDS: Record<string, string> = {
  'run:succeeded': 'succeeded',
  'run:partial': 'partial',
  'run:failed': 'failed',
  'run:cancelled': 'cancelled',
  'run:expired': 'expired',
};

export function applyEvent(view: RunView, e: BatonEvent): void {
  if (e.runId === view.rootId && e.type in ENDS) {
    view.ended = true;
    view.status = ENDS[e.type] as string;
  }
  if (e.type === 'run:created') {
    const d = e.data as { name: string; kind: string; stepId?: string };
    if (d.kind === 'flow') return;
    view.rows.set(e.runId, {
      runId: e.runId,
      label: d.stepId ?? d.name,
      task: d.name,
      status: 'queued',
      attempt: 0,
      startedAt: null,
      endedAt: null,
      checkpoints: 0,
      done: null,
      total: null,
      findings: 0,
      note: '',
      timeStatus: null,
      remainingSeconds: null,
    });
    return;
  }
  if (e.runId === view.rootId && e.type === 'run:resumed') view.ended = false;
  const row = view.rows.get(e.runId);
  if (!row) return;
  switch (e.type) {
    case 'run:queued':
      row.status = 'queued';
      break;
    case 'run:waiting': {
      const d = e.data as { reason: string; wakeAt?: string };
      row.status = `waiting:${d.reason}`;
      row.note = d.reason === 'timer' && d.wakeAt ? `retry at ${d.wakeAt.slice(11, 19)}` : '';
      break;
    }
    case 'attempt:started': {
      const d = e.data as { attempt: number; resumedFrom?: number };
      row.status = 'running';
      row.attempt = d.attempt;
      row.startedAt ??= e.at;
      row.endedAt = null;
      row.note = d.resumedFrom ? `resumed from checkpoint ${d.resumedFrom}` : '';
      break;
    }
    case 'checkpoint:saved': {
      const d = e.data as { timeStatus?: string; remainingSeconds?: number };
      row.checkpoints++;
      if (d.timeStatus) row.timeStatus = d.timeStatus;
      if (d.remainingSeconds !== undefined) row.remainingSeconds = d.remainingSeconds;
      break;
    }
    case 'time:mode_changed': {
      const d = e.data as { to: string; timeStatus: string; remainingSeconds: number };
      row.timeStatus = d.timeStatus;
      row.remainingSeconds = d.remainingSeconds;
      row.note = d.to === 'ACCELERATE' ? 'ACCELERATE: wrapping up' : '';
      break;
    }
    case 'tool:skipped':
      row.note = `skipped ${(e.data as { name: string }).name}: ${(e.data as { alternative: string }).alternative}`;
      break;
    case 'decision:requested':
      row.note = 'needs a decision';
      break;
    case 'decision:made': {
      const d = e.data as unknown as { answer: { choice: string }; by: string };
      row.note = `decided: ${d.answer.choice} (by ${d.by})`;
      break;
    }
    case 'progress:reported': {
      const d = e.data as { done: number; total: number | null };
      row.done = d.done;
      row.total = d.total;
      break;
    }
    case 'partial:recorded':
      row.findings = (e.data as { total: number }).total;
      break;
    case 'step:replayed':
      row.note = `${(e.data as { count: number }).count} memoized step(s) not redone`;
      break;
    case 'attempt:timed_out':
      row.note = `timed out after ${Math.round((e.data as { timeoutMs: number }).timeoutMs / 1000)}s`;
      break;
    case 'attempt:failed':
      row.note = (e.data as { error: { message: string } }).error.message.slice(0, 60);
      break;
    default:
      if (e.type in ENDS) {
        row.status = ENDS[e.type] as string;
        row.endedAt = e.at;
      }
  }
}

export function elapsedMs(row: StepRow, now: number): number {
  if (row.startedAt === null) return 0;
  return (row.endedAt ?? now) - row.startedAt;
}

/** A one-line, human description of an event for plain output and timelines. */
export function describeEvent(e: BatonEvent): string {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'run:created':
      return `${d.kind} ${d.name} created`;
    case 'attempt:started':
      return `attempt ${d.attempt} started${d.timeoutMs ? ` (timeout ${formatDuration(Number(d.timeoutMs))})` : ''}${d.resumedFrom ? `, resuming from checkpoint ${d.resumedFrom}` : ''}`;
    case 'checkpoint:saved':
      return `checkpoint ${d.seq}${d.itemsAnalyzed !== null ? ` after ${d.itemsAnalyzed} items` : ''}${d.timeStatus ? ` (${d.timeStatus}, ${d.remainingSeconds}s of budget left)` : ''}${d.moment && d.moment !== 'explicit' ? ` [${d.moment}]` : ''}`;
    case 'checkpoint:invalid':
      return `checkpoint ${d.seq} ignored: ${d.reason}`;
    case 'step:replayed':
      return `${d.count} memoized step(s) taken from the record, not redone`;
    case 'attempt:retrying':
      // Attempt 2 is the first retry: "retry 1 (attempt 2)".
      return `retry ${Number(d.nextAttempt) - 1} (attempt ${d.nextAttempt}) in ${formatDuration(Number(d.waitMs))}${d.nextTimeoutMs ? ` with timeout ${formatDuration(Number(d.nextTimeoutMs))}` : ''}`;
    case 'attempt:failed':
    case 'run:failed':
      return `${e.type === 'run:failed' ? 'failed' : `attempt ${d.attempt} failed`}: ${(d.error as { message: string }).message}`;
    case 'attempt:timed_out':
      return `attempt ${d.attempt} timed out after ${formatDuration(Number(d.timeoutMs))} with ${d.findings} finding(s) kept`;
    case 'time:mode_changed':
      return `${d.from} → ${d.to} (${d.timeStatus}, ${d.remainingSeconds}s left)`;
    case 'tool:skipped':
    case 'tool:degraded':
      return `${e.type === 'tool:skipped' ? 'skipped' : 'cheap alternative for'} ${d.name}: ${d.reason} → ${d.alternative}`;
    case 'decision:requested':
      return String((d.request as { message: string }).message).replace(/\n+/g, ' ');
    case 'decision:made':
      return `decided ${(d.answer as { choice: string }).choice} (by ${d.by}) → ${d.action}`;
    case 'log:message':
      return String(d.message).replace(/\n+/g, ' ');
    case 'lease:recovered':
      return `taken back from ${d.previousOwner} (${d.reason})`;
    case 'progress:reported':
      return `progress ${d.done}${d.total !== null ? `/${d.total}` : ''}`;
    case 'partial:recorded':
      return `${d.count} finding(s) recorded (${d.total} in this attempt)`;
    default: {
      const text = JSON.stringify(d);
      return text === '{}' ? '' : text.length > 100 ? `${text.slice(0, 97)}...` : text;
    }
  }
}
