import { describe, expect, it } from 'vitest';
import type { BatonEvent, BatonEventType } from '../core/index.ts';
import type { Store } from '../store/index.ts';
import { ManualClock } from '../time/index.ts';
import { createBatonMetrics, measureStore } from './run-metrics.ts';

let nextId = 1;
function event(runId: string, type: BatonEventType, data: Record<string, unknown> = {}): BatonEvent {
  return { id: nextId++, runId, rootId: runId, type, at: 0, data } as unknown as BatonEvent;
}

describe('createBatonMetrics', () => {
  it('counts resumes and how they ended; the success ratio is succeeded / resumes', async () => {
    const m = createBatonMetrics(new ManualClock());
    m.observe([event('a', 'run:resumed'), event('b', 'run:resumed'), event('c', 'run:resumed')]);
    m.observe([
      event('a', 'run:waiting', { reason: 'resume' }),
      event('b', 'run:succeeded'),
      event('c', 'run:failed'),
    ]);
    m.observe([event('a', 'run:resumed'), event('a', 'run:succeeded'), event('z', 'run:succeeded')]);
    expect(m.resumes.get()).toBe(4);
    expect(m.resumeOutcomes.get({ outcome: 'succeeded' })).toBe(2);
    expect(m.resumeOutcomes.get({ outcome: 'waiting' })).toBe(1);
    expect(m.resumeOutcomes.get({ outcome: 'failed' })).toBe(1);
    expect(await m.registry.render()).toContain('baton_resume_success_ratio 0.5\n');
  });

  it("measures resume overhead from the HTTP request's arrival to the attempt's start", async () => {
    const clock = new ManualClock();
    const m = createBatonMetrics(clock);
    const arrived = clock.monotonic();
    await clock.advance(3);
    m.observe([event('a', 'run:resumed')]);
    m.resumeArrived('a', arrived);
    await clock.advance(4);
    m.observe([event('a', 'attempt:started')]);
    // A late arrival after the start, and a later attempt, are not paired with anything.
    m.resumeArrived('a', clock.monotonic());
    m.observe([event('a', 'attempt:started')]);
    expect(m.resumeOverheadMs.count()).toBe(1);
    expect(await m.registry.render()).toContain('baton_resume_overhead_ms_sum 7\n');
  });

  it('takes compression ratios from agent events and checkpoint times from events that carry them', async () => {
    const m = createBatonMetrics(new ManualClock());
    m.observe([
      event('a', 'task:event', { kind: 'history:compressed', data: { sizeRatio: 0.3 } }),
      event('a', 'checkpoint:saved', { seq: 1, durationMs: 2 }),
      event('a', 'checkpoint:loaded', { seq: 1, durationMs: 1 }),
      event('a', 'checkpoint:saved', { seq: 2 }),
    ]);
    expect(m.compressionRatio.count()).toBe(1);
    expect(m.checkpointSaveMs.count()).toBe(1);
    expect(m.checkpointLoadMs.count()).toBe(1);
  });
});

describe('measureStore', () => {
  it('times checkpoint saves and loads, passes everything else through, and then ignores event timings', async () => {
    const clock = new ManualClock();
    const m = createBatonMetrics(clock);
    const fake = {
      dialect: 'sqlite',
      async saveCheckpoint() {
        await clock.advance(7);
        return 3;
      },
      async getLastCheckpoint() {
        await clock.advance(2);
        return undefined;
      },
      async countRuns() {
        return { queued: 1 };
      },
    } as unknown as Store;
    const store = measureStore(fake, m, clock);
    expect(
      await store.saveCheckpoint(
        { runId: 'a', token: 1 },
        { attempt: 1, state: {}, record: {}, version: 1 },
        [],
      ),
    ).toBe(3);
    expect(await store.getLastCheckpoint('a')).toBeUndefined();
    expect(await store.countRuns()).toEqual({ queued: 1 });
    expect(store.dialect).toBe('sqlite');
    m.observe([event('a', 'checkpoint:saved', { seq: 1, durationMs: 100 })]);
    const text = await m.registry.render();
    expect(text).toContain('baton_checkpoint_save_ms_sum 7\n');
    expect(text).toContain('baton_checkpoint_save_ms_count 1\n');
    expect(text).toContain('baton_checkpoint_load_ms_sum 2\n');
  });
});
