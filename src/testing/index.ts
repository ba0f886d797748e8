/**
 * Test helpers for Baton users and Baton's own tests (`baton/testing`): a manual clock, a runtime
 * on a temporary SQLite file, and waiting for events instead of sleeping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatonEvent, BatonEventType } from '../core/index.ts';
import { type Baton, type BatonOptions, createBaton } from '../runtime/index.ts';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { ManualClock } from '../time/index.ts';

export { ManualClock } from '../time/index.ts';

export interface TestRuntime {
  baton: Baton;
  clock: ManualClock;
  store: SqliteStore;
  dir: string;
  /** Closes the runtime and deletes its files. */
  dispose(): Promise<void>;
}

/** A Baton on a fresh SQLite file in a temp dir, driven by a ManualClock. */
export function testRuntime(
  options: Omit<BatonOptions, 'store' | 'clock'> & { start?: number | string } = {},
): TestRuntime {
  const dir = mkdtempSync(join(tmpdir(), 'baton-test-'));
  const clock = new ManualClock(options.start ?? '2026-11-22T12:00:00Z');
  // NORMAL: a commit is acknowledged at once instead of after an fdatasync on libuv's thread pool,
  // which takes real time that a ManualClock-driven test does not wait for (advance() settles the
  // event loop, not the disk). A test runtime is not about surviving power loss.
  const store = openSqliteStore(join(dir, 'baton.db'), { clock, synchronous: 'NORMAL' });
  const baton = createBaton({ ...options, store, clock });
  return {
    baton,
    clock,
    store,
    dir,
    async dispose() {
      await baton.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Moves the manual clock forward in small steps until `check` holds — for waiting on work that
 * itself waits on timers (retries, deliveries) without sleeping. Throws after `maxMs` of clock time.
 */
export async function advanceUntil(
  clock: ManualClock,
  check: () => boolean | Promise<boolean>,
  { stepMs = 100, maxMs = 3_600_000 }: { stepMs?: number; maxMs?: number } = {},
): Promise<void> {
  for (let moved = 0; !(await check()); moved += stepMs) {
    if (moved > maxMs) throw new Error(`advanceUntil: condition not met after ${maxMs} ms of clock time`);
    await clock.advance(stepMs);
  }
}

/**
 * Resolves with the `nth` event (from 1) of this type for the run, whether it was already stored or
 * comes later — so a test can wait for "the second retry" before it moves the manual clock.
 */
export async function eventOf<T extends BatonEventType>(
  rt: { store: { readEvents(q: { runId: string; limit: number }): Promise<BatonEvent[]> } } & Parameters<
    typeof nextEvent
  >[0],
  type: T,
  runId: string,
  nth = 1,
): Promise<BatonEvent<T>> {
  for (;;) {
    const later = nextEvent(rt, type, runId);
    const seen = (await rt.store.readEvents({ runId, limit: 10_000 })).filter((e) => e.type === type);
    if (seen.length >= nth) return seen[nth - 1] as BatonEvent<T>;
    await later;
  }
}

/** Resolves with the first committed event of this type (for this run, when given). */
export function nextEvent<T extends BatonEventType>(
  source: { store: { onEvents(l: (e: readonly BatonEvent[]) => void): () => void } },
  type: T,
  runId?: string,
): Promise<BatonEvent<T>> {
  return new Promise((resolve) => {
    const off = source.store.onEvents((events) => {
      const hit = events.find((e) => e.type === type && (runId === undefined || e.runId === runId));
      if (hit) {
        off();
        resolve(hit as BatonEvent<T>);
      }
    });
  });
}
