/**
 * The run page's timeline as data: one lane per attempt (per step run, for a flow) with its timeout
 * window, the attempt itself, the retry wait before the next one, steps as bars, checkpoints as
 * ticks with their progress, partial results, decision waits, timers and the delivery due time — and
 * a time scale that compresses long idle gaps so hours of waiting do not squeeze seconds of work.
 * Pure: the view only draws what this returns.
 */
import type { BatonEvent } from '../../../core/index.ts';
import type { RunRow, Timeline } from '../../../http/index.ts';

export type ItemKind =
  | 'window'
  | 'attempt'
  | 'wait'
  | 'step'
  | 'checkpoint'
  | 'partial'
  | 'decision'
  | 'timer'
  | 'delivery';

export interface LaneItem {
  kind: ItemKind;
  from: number;
  /** Equal to `from` for an instant (a tick). */
  to: number;
  label: string;
  /** The event type the item comes from (the type filter hides items by it). */
  type: string;
  /** running / succeeded / failed / timed_out for attempts. */
  outcome?: string;
  /** Progress 0–100 of a checkpoint. */
  progress?: number | null;
  /** The item is still open at `now` (drawn to the now line). */
  open?: boolean;
}

export interface Lane {
  key: string;
  runId: string;
  label: string;
  attempt: number;
  items: LaneItem[];
}

const ENDS: Record<string, string> = {
  'attempt:succeeded': 'succeeded',
  'attempt:failed': 'failed',
  'attempt:timed_out': 'timed_out',
};

function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${+(ms / 3_600_000).toFixed(1)} h`;
}

/** Lanes of one run (a task or a flow's step), from its events in order. */
export function runLanes(run: RunRow, events: readonly BatonEvent[], now: number, label: string): Lane[] {
  const lanes: Lane[] = [];
  let lane: Lane | undefined;
  let pendingWait: LaneItem | undefined;
  let decision: LaneItem | undefined;
  let timer: LaneItem | undefined;
  const laneFor = (attempt: number): Lane => {
    if (lane && lane.attempt === attempt) return lane;
    lane = {
      key: `${run.id}#${attempt}`,
      runId: run.id,
      label: `${label} · attempt ${attempt}`,
      attempt,
      items: [],
    };
    lanes.push(lane);
    return lane;
  };
  const add = (item: LaneItem) => {
    const l = lane ?? laneFor(Math.max(1, run.attempt));
    l.items.push(item);
  };
  for (const e of events) {
    if (e.runId !== run.id) continue;
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'attempt:started': {
        const attempt = Number(d.attempt);
        const l = laneFor(attempt);
        if (pendingWait) {
          pendingWait.to = e.at;
          pendingWait.open = false;
          l.items.push(pendingWait);
          pendingWait = undefined;
        }
        const timeoutMs = typeof d.timeoutMs === 'number' ? d.timeoutMs : null;
        if (timeoutMs !== null)
          l.items.push({
            kind: 'window',
            from: e.at,
            to: e.at + timeoutMs,
            label: `timeout ${seconds(timeoutMs)}`,
            type: e.type,
          });
        l.items.push({
          kind: 'attempt',
          from: e.at,
          to: now,
          label: `attempt ${attempt}`,
          type: e.type,
          outcome: 'running',
          open: true,
        });
        break;
      }
      case 'attempt:succeeded':
      case 'attempt:failed':
      case 'attempt:timed_out': {
        const bar = lane?.items.findLast((i) => i.kind === 'attempt' && i.open);
        if (bar) {
          bar.to = e.at;
          bar.open = false;
          bar.outcome = ENDS[e.type] ?? 'failed';
        }
        break;
      }
      case 'attempt:retrying': {
        const waitMs = Number(d.waitMs) || 0;
        // Drawn in the next attempt's lane, where the wait ends.
        pendingWait = {
          kind: 'wait',
          from: e.at,
          to: e.at + waitMs,
          label: `wait ${seconds(waitMs)} before attempt ${d.nextAttempt}`,
          type: e.type,
          open: true,
        };
        break;
      }
      case 'step:completed': {
        const ms = Number(d.durationMs) || 0;
        add({ kind: 'step', from: e.at - ms, to: e.at, label: `${d.key} (${seconds(ms)})`, type: e.type });
        break;
      }
      case 'checkpoint:saved': {
        const p = typeof d.progressPercentage === 'number' ? d.progressPercentage : null;
        add({
          kind: 'checkpoint',
          from: e.at,
          to: e.at,
          label: `checkpoint ${d.seq}${p === null ? '' : ` · ${p}%`}`,
          type: e.type,
          progress: p,
        });
        break;
      }
      case 'partial:recorded':
        add({
          kind: 'partial',
          from: e.at,
          to: e.at,
          label: `partial result (${d.total} so far)`,
          type: e.type,
        });
        break;
      case 'decision:requested':
        decision = {
          kind: 'decision',
          from: e.at,
          to: now,
          label: `waiting for a decision: ${String(d.reason ?? '')}`,
          type: e.type,
          open: true,
        };
        add(decision);
        break;
      case 'decision:made':
        if (decision) {
          decision.to = e.at;
          decision.open = false;
          decision.label = `decided ${(d.answer as { choice?: string })?.choice ?? ''} by ${d.by}`;
          decision = undefined;
        }
        break;
      case 'run:waiting':
        // A retry's wait is drawn as the wait; other timers (ctx.sleep, a delayed start) as timers.
        if (d.reason === 'timer' && typeof d.wakeAt === 'string' && !pendingWait) {
          timer = {
            kind: 'timer',
            from: e.at,
            to: Date.parse(d.wakeAt),
            label: `timer until ${d.wakeAt}`,
            type: e.type,
          };
          add(timer);
        }
        break;
      default:
        break;
    }
  }
  if (pendingWait) {
    // The wait is under way: the next attempt has no lane yet.
    const next = laneFor((lane?.attempt ?? 0) + 1);
    pendingWait.to = Math.max(pendingWait.to, pendingWait.from);
    next.items.push(pendingWait);
  }
  const schedule = (run.options as { schedule?: { at?: number; text?: string } }).schedule;
  if (schedule?.at !== undefined) {
    const l = lanes.at(-1) ?? laneFor(1);
    l.items.push({
      kind: 'delivery',
      from: schedule.at,
      to: schedule.at,
      label: `delivery due (“${schedule.text ?? ''}”)`,
      type: 'tool:result',
    });
  }
  return lanes;
}

/** Every lane of the page: the run's own, or for a flow each step's. */
export function timelineLanes(t: Timeline, now: number): Lane[] {
  if (t.steps.length === 0) return runLanes(t.run, t.events, now, t.run.name);
  return t.steps.flatMap((s) => runLanes(s, t.events, now, s.stepId ?? s.name));
}

export interface Segment {
  from: number;
  to: number;
  /** An idle gap drawn at a fixed width. */
  compressed: boolean;
  /** Where it starts and ends on the 0–1 axis. */
  x0: number;
  x1: number;
}

export interface Scale {
  start: number;
  end: number;
  segments: Segment[];
  /** Position of an instant on the 0–1 axis. */
  x(t: number): number;
}

/**
 * A time axis from `start` to `end` where every stretch without activity longer than
 * `minGapMs` (default: a tenth of the span, at least a minute) is drawn `gapWidth` wide.
 */
export function compressedScale(
  start: number,
  end: number,
  busy: ReadonlyArray<readonly [number, number]>,
  options: { minGapMs?: number; gapWidth?: number } = {},
): Scale {
  const span = Math.max(1, end - start);
  const minGap = options.minGapMs ?? Math.max(60_000, span / 10);
  const gapWidth = options.gapWidth ?? 0.04;
  const merged: Array<[number, number]> = [];
  for (const [a, b] of [...busy]
    .map(([a, b]) => [Math.max(start, a), Math.min(end, b)] as const)
    .sort((p, q) => p[0] - q[0])) {
    if (b < a) continue;
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const raw: Array<{ from: number; to: number; compressed: boolean }> = [];
  let cursor = start;
  for (const [a, b] of merged) {
    if (a - cursor > minGap) {
      raw.push({ from: cursor, to: a, compressed: true });
      cursor = a;
    }
    cursor = Math.max(cursor, b);
  }
  if (end - cursor > minGap) raw.push({ from: cursor, to: end, compressed: true });
  // Fill the stretches between gaps as linear segments.
  const pieces: Array<{ from: number; to: number; compressed: boolean }> = [];
  let at = start;
  for (const g of raw) {
    if (g.from > at) pieces.push({ from: at, to: g.from, compressed: false });
    pieces.push(g);
    at = g.to;
  }
  if (at < end || pieces.length === 0)
    pieces.push({ from: at, to: Math.max(end, at + 1), compressed: false });
  const gaps = pieces.filter((p) => p.compressed).length;
  const linearMs = pieces.filter((p) => !p.compressed).reduce((n, p) => n + (p.to - p.from), 0);
  const linearWidth = Math.max(0.2, 1 - gaps * gapWidth);
  const fixed = gaps > 0 ? (1 - linearWidth) / gaps : 0;
  let x = 0;
  const segments: Segment[] = pieces.map((p) => {
    const w = p.compressed ? fixed : linearMs > 0 ? ((p.to - p.from) / linearMs) * linearWidth : 0;
    const s = { ...p, x0: x, x1: x + w };
    x += w;
    return s;
  });
  const last = segments.at(-1);
  if (last) last.x1 = 1;
  return {
    start,
    end,
    segments,
    x(t: number) {
      if (t <= start) return 0;
      if (t >= end) return 1;
      const s = segments.find((seg) => t >= seg.from && t <= seg.to) ?? segments.at(-1);
      if (!s) return 0;
      const f = s.to === s.from ? 0 : (t - s.from) / (s.to - s.from);
      return s.x0 + f * (s.x1 - s.x0);
    },
  };
}

/** What counts as activity for gap compression: everything but the part of a timeout window after its attempt. */
export function busySpans(lanes: readonly Lane[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const lane of lanes)
    for (const i of lane.items) {
      if (i.kind === 'window') continue;
      if (i.kind === 'timer' || i.kind === 'wait' || i.kind === 'decision') {
        // Waiting is idle time, but its ends matter.
        spans.push([i.from, i.from], [i.to, i.to]);
        continue;
      }
      spans.push([i.from, i.to]);
    }
  return spans;
}

/**
 * The span the axis covers: the run's start to now (or its end) and the delivery due time; the
 * timeout window of an attempt still running (its deadline). A finished attempt's unused window is
 * clipped at the axis end rather than stretching it.
 */
export function timelineRange(run: RunRow, lanes: readonly Lane[], now: number): [number, number] {
  let start = run.startedAt ?? run.createdAt;
  let end = run.finishedAt ?? now;
  for (const lane of lanes) {
    const running = lane.items.some((a) => a.kind === 'attempt' && a.open);
    for (const i of lane.items) {
      start = Math.min(start, i.from);
      if (i.kind !== 'window' || running) end = Math.max(end, i.to);
    }
  }
  return [start, Math.max(end, start + 1000)];
}
