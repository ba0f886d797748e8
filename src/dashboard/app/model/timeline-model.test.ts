import { describe, expect, it } from 'vitest';
import type { BatonEvent } from '../../../core/index.ts';
import type { RunRow } from '../../../http/index.ts';
import { countdown, diffJson, formatDuration, formatInZone, formatUtc } from './format.ts';
import { busySpans, compressedScale, runLanes, timelineRange } from './timeline-model.ts';

const T0 = Date.UTC(2026, 10, 25, 9, 0, 0);
let id = 0;
const ev = (type: string, at: number, data: Record<string, unknown>, runId = 'r'): BatonEvent =>
  ({ id: ++id, runId, rootId: runId, type, at: T0 + at, data }) as unknown as BatonEvent;
const run = (extra: Partial<RunRow> = {}): RunRow =>
  ({
    id: 'r',
    rootId: 'r',
    name: 't',
    attempt: 2,
    createdAt: T0,
    startedAt: T0,
    finishedAt: null,
    options: {},
    ...extra,
  }) as RunRow;

describe('runLanes', () => {
  const events = [
    ev('attempt:started', 0, { attempt: 1, timeoutMs: 60_000 }),
    ev('step:completed', 3_000, { key: 'a', durationMs: 2_000 }),
    ev('checkpoint:saved', 4_000, { seq: 1, progressPercentage: 40 }),
    ev('partial:recorded', 5_000, { count: 1, total: 1 }),
    ev('attempt:timed_out', 60_000, { attempt: 1, timeoutMs: 60_000, findings: 1 }),
    ev('attempt:retrying', 60_000, { attempt: 1, nextAttempt: 2, waitMs: 5_000, nextTimeoutMs: 120_000 }),
    ev('run:waiting', 60_000, { reason: 'timer', wakeAt: new Date(T0 + 65_000).toISOString() }),
    ev('attempt:started', 65_000, { attempt: 2, timeoutMs: 120_000 }),
    ev('decision:requested', 70_000, { reason: 'asks' }),
  ];

  it('draws one lane per attempt with its timeout window (×2), the retry wait in the next lane, and open items to now', () => {
    const lanes = runLanes(run(), events, T0 + 80_000, 't');
    expect(lanes.map((l) => l.attempt)).toEqual([1, 2]);
    const [first, second] = lanes;
    expect(first?.items.map((i) => [i.kind, i.from - T0, i.to - T0])).toEqual([
      ['window', 0, 60_000],
      ['attempt', 0, 60_000],
      ['step', 1_000, 3_000],
      ['checkpoint', 4_000, 4_000],
      ['partial', 5_000, 5_000],
    ]);
    expect(first?.items.find((i) => i.kind === 'attempt')?.outcome).toBe('timed_out');
    expect(first?.items.find((i) => i.kind === 'checkpoint')?.progress).toBe(40);
    expect(second?.items.map((i) => [i.kind, i.from - T0, i.to - T0, i.open ?? false])).toEqual([
      ['wait', 60_000, 65_000, false],
      ['window', 65_000, 185_000, false],
      ['attempt', 65_000, 80_000, true],
      ['decision', 70_000, 80_000, true],
    ]);
  });

  it('puts a wait still under way in the lane of the attempt it waits for', () => {
    const lanes = runLanes(run({ attempt: 1 }), events.slice(0, 7), T0 + 62_000, 't');
    expect(lanes.map((l) => l.attempt)).toEqual([1, 2]);
    expect(lanes[1]?.items.map((i) => i.kind)).toEqual(['wait']);
  });

  it('covers the running attempt’s deadline but not a finished attempt’s unused window', () => {
    const lanes = runLanes(run(), events, T0 + 80_000, 't');
    expect(timelineRange(run(), lanes, T0 + 80_000)).toEqual([T0, T0 + 185_000]);
    const ended = [
      ...events.slice(0, 4),
      ev('attempt:succeeded', 10_000, { attempt: 1, durationMs: 10_000 }),
    ];
    const done = runLanes(run({ finishedAt: T0 + 10_000 }), ended, T0 + 10_000, 't');
    expect(timelineRange(run({ finishedAt: T0 + 10_000 }), done, T0 + 10_000)).toEqual([T0, T0 + 10_000]);
  });
});

describe('compressedScale', () => {
  it('draws an idle hour narrow and keeps the busy minutes linear', () => {
    const start = T0;
    const end = T0 + 3_720_000;
    const busy: Array<[number, number]> = [
      [T0, T0 + 60_000],
      [T0 + 3_660_000, end],
    ];
    const s = compressedScale(start, end, busy, { gapWidth: 0.1 });
    expect(s.segments.map((g) => g.compressed)).toEqual([false, true, false]);
    expect(s.x(T0)).toBe(0);
    expect(s.x(end)).toBe(1);
    expect(s.x(T0 + 60_000)).toBeCloseTo(0.45);
    expect(s.x(T0 + 3_660_000)).toBeCloseTo(0.55);
    expect(s.x(T0 + 30_000)).toBeCloseTo(0.225);
    // Monotonic everywhere.
    let last = -1;
    for (let t = start; t <= end; t += 60_000) {
      expect(s.x(t)).toBeGreaterThanOrEqual(last);
      last = s.x(t);
    }
  });

  it('compresses nothing when activity is dense, and ignores timeout windows as activity', () => {
    const s = compressedScale(T0, T0 + 100_000, [[T0, T0 + 100_000]]);
    expect(s.segments).toHaveLength(1);
    expect(s.x(T0 + 50_000)).toBeCloseTo(0.5);
    const lanes = runLanes(
      run(),
      [ev('attempt:started', 0, { attempt: 1, timeoutMs: 600_000 })],
      T0 + 1_000,
      't',
    );
    expect(busySpans(lanes)).toEqual([[T0, T0 + 1_000]]);
  });
});

describe('format', () => {
  it('durations, countdowns, zones and UTC', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_500)).toBe('12.5 s');
    expect(formatDuration(243_000)).toBe('4 min 03 s');
    expect(formatDuration(3_720_000)).toBe('1 h 02 min');
    expect(countdown(T0 + 5_400, T0)).toBe('in 5 s');
    expect(countdown(T0 + 400, T0)).toBe('now');
    expect(countdown(T0 - 61_000, T0)).toBe('1 min 01 s ago');
    expect(formatInZone(T0, 'Asia/Shanghai')).toBe('2026-11-25 17:00:00 Asia/Shanghai');
    expect(formatUtc(T0)).toBe('2026-11-25 09:00:00 UTC');
  });

  it('diffs checkpoint states by path', () => {
    expect(diffJson({ next: 3, seen: ['a'], old: 1 }, { next: 6, seen: ['a'], extra: true })).toEqual([
      { path: '$.old', kind: 'removed', before: 1 },
      { path: '$.next', kind: 'changed', before: 3, after: 6 },
      { path: '$.extra', kind: 'added', after: true },
    ]);
  });
});
