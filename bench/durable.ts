/**
 * Durable primitives (issue 15): what a sleeping run costs in the store, and how late it wakes.
 *
 * - `durable.sleeping_run_bytes`: growth of the SQLite file (after a WAL checkpoint) per run that
 *   is suspended in a week-long `ctx.sleep` — its run row, the sleep's memo step and its events.
 * - `durable.wake_lateness_p50_ms` / `_p99_ms`: 200 runs sleep until the same moment on the system
 *   clock; lateness is when each body resumes after its wake time (claim, replay, step lookup).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createBaton, defineTask, ManualClock } from '../src/index.ts';
import { openSqliteStore, sqliteDriver } from '../src/store/index.ts';
import { type BenchMetric, median, round, withTempDir } from './_stats.ts';

const { Database } = sqliteDriver();

const SLEEPERS = 1_000;
const WAKERS = 200;

function fileBytes(path: string): number {
  const db = new Database(path);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return statSync(path).size;
}

async function sleepingRunBytes(dir: string): Promise<number> {
  const path = join(dir, 'sleep.db');
  const clock = new ManualClock('2026-11-25T12:00:00Z');
  const store = openSqliteStore(path, { clock });
  const nap = defineTask({ name: 'nap', run: async (_: unknown, ctx) => ctx.sleep('7d') });
  const baton = createBaton({ store, clock, tasks: [nap], worker: { concurrency: 50, pollMs: 3_600_000 } });
  await baton.ready();
  const before = fileBytes(path);
  for (let i = 0; i < SLEEPERS; i++) await baton.start(nap, {});
  for (;;) {
    const waiting = await store.listRuns({ waitReason: 'timer', limit: SLEEPERS });
    if (waiting.length === SLEEPERS) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await baton.close();
  await store.close();
  return (fileBytes(path) - before) / SLEEPERS;
}

async function wakeLateness(dir: string): Promise<number[]> {
  const store = openSqliteStore(join(dir, 'wake.db'));
  const wakeAt = Date.now() + 2_000;
  const late: number[] = [];
  const waker = defineTask({
    name: 'waker',
    run: async (_: unknown, ctx) => {
      await ctx.sleepUntil(wakeAt);
      late.push(Date.now() - wakeAt);
    },
  });
  const baton = createBaton({ store, tasks: [waker], worker: { concurrency: 50 } });
  const runs = [];
  for (let i = 0; i < WAKERS; i++) runs.push(await baton.start(waker, {}));
  await Promise.all(runs.map((r) => r.result()));
  await baton.close();
  await store.close();
  return late.sort((a, b) => a - b);
}

export default async function bench(): Promise<BenchMetric[]> {
  const bytes = await withTempDir('durable', sleepingRunBytes);
  const late = await withTempDir('durable', wakeLateness);
  return [
    { metric: 'durable.sleeping_run_bytes', value: round(bytes), unit: 'B' },
    { metric: 'durable.wake_lateness_p50_ms', value: round(median(late)), unit: 'ms' },
    {
      metric: 'durable.wake_lateness_p99_ms',
      value: round(late[Math.floor(late.length * 0.99)] ?? 0),
      unit: 'ms',
    },
  ];
}
