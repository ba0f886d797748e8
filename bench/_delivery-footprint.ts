/**
 * What held results cost while they wait, and how fast a restarted Baton is ready to deliver them
 * (see bench/delivery.ts): heap and SQLite bytes per pending delivery, then clean restarts on the
 * same file timed until the worker's one clock timer is armed for the earliest due row.
 */
import { type Clock, createBaton, systemClock, type TimerHandle } from '../src/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import {
  countEvents,
  databaseBytes,
  echoTool,
  runIds,
  settledHeap,
  spread,
  startScheduled,
} from './_delivery-runs.ts';
import { median } from './_stats.ts';

/** Runs held before the baseline: JIT, statement cache, page cache and file growth settle first. */
const WARMUP = 500;
/** The pending deliveries are due this far ahead: nothing comes due during the measurement. */
const DUE_IN_MS = 30 * 60_000;
/** A poll longer than DUE_IN_MS, so the armed wake timer is the one for the earliest due row. */
const RECOVERY_POLL_MS = 4 * 60 * 60_000;
const RECOVERY_ROUNDS = 5;
const ARM_TIMEOUT_MS = 15_000;

export interface Footprint {
  heapBytesPerPending: number;
  dbBytesPerPending: number;
  /** Enqueue plus execution of all runs until every result was held. */
  holdMs: number;
  /** Median over the rounds: open the file, createBaton, ready(), until the wake timer is armed. */
  recoveryMs: number;
  /** Median over the rounds: the same until `ready()` resolved. */
  readyMs: number;
}

/** The system clock, reporting every timer armed through it (the worker's wake timer among them). */
class ArmWatchClock implements Clock {
  constructor(private readonly onArm: (delayMs: number) => void) {}
  now(): number {
    return systemClock.now();
  }
  monotonic(): number {
    return systemClock.monotonic();
  }
  setTimer(ms: number, fn: () => void): TimerHandle {
    this.onArm(ms);
    return systemClock.setTimer(ms, fn);
  }
  clearTimer(handle: TimerHandle | undefined): void {
    systemClock.clearTimer(handle);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Holds `n` results (due DUE_IN_MS ahead) and measures heap and file growth per held result. */
async function holdAndMeasure(
  path: string,
  n: number,
  concurrency: number,
): Promise<{ heap: number; db: number; holdMs: number; earliest: number }> {
  const store = openSqliteStore(path);
  const baton = createBaton({ store, worker: { concurrency } });
  const tool = echoTool();
  baton.register(tool);
  try {
    await baton.ready();
    // Warm-up rows are due after the measured ones, so the earliest due row is a measured one.
    const warm = countEvents(store, 'delivery:held', WARMUP);
    const warmDues = spread(Date.now() + 2 * DUE_IN_MS, 3_000, WARMUP);
    await startScheduled(baton, tool, runIds('warm', WARMUP), warmDues.map(iso));
    await warm.done;
    const dues = spread(Date.now() + DUE_IN_MS, 3_000, n);
    const ids = runIds('pend', n);
    const schedules = dues.map(iso);
    const held = countEvents(store, 'delivery:held', n);
    await settle(baton);
    const heap0 = settledHeap();
    const db0 = databaseBytes(path);
    const t0 = performance.now();
    await startScheduled(baton, tool, ids, schedules);
    await held.done;
    const holdMs = performance.now() - t0;
    await settle(baton);
    const heap1 = settledHeap();
    const db1 = databaseBytes(path);
    const earliest = dues[0] as number;
    const next = await store.nextWakeAt();
    if (next !== earliest)
      throw new Error(`bench: nextWakeAt() is ${next}, expected the earliest due ${earliest}`);
    const counts = await store.countRuns();
    if (counts.waiting !== n + WARMUP)
      throw new Error(`bench: expected ${n + WARMUP} held runs, the store has ${JSON.stringify(counts)}`);
    return { heap: (heap1 - heap0) / n, db: (db1 - db0) / n, holdMs, earliest };
  } finally {
    await baton.close();
    await store.close();
  }
}

/** No attempt running, and the write queue and the worker's follow-up tick done. */
async function settle(baton: { worker?: { idle(): Promise<void> } | undefined }): Promise<void> {
  await baton.worker?.idle();
  await pause(300);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** One clean restart on the file: [ms until ready() resolved, ms until the wake timer was armed for `earliest`]. */
async function restart(path: string, concurrency: number, earliest: number): Promise<[number, number]> {
  let armedAt = Number.NaN;
  let armed!: () => void;
  const whenArmed = new Promise<void>((resolve) => {
    armed = resolve;
  });
  // The worker arms its wake timer with `nextWakeAt() - clock.now()` in the turn it read nextWakeAt.
  const clock = new ArmWatchClock((delay) => {
    if (Number.isNaN(armedAt) && Math.abs(systemClock.now() + delay - earliest) <= 2) {
      armedAt = performance.now();
      armed();
    }
  });
  const t0 = performance.now();
  const store = openSqliteStore(path, { clock });
  const baton = createBaton({ store, clock, worker: { concurrency, pollMs: RECOVERY_POLL_MS } });
  baton.register(echoTool());
  let timeout: NodeJS.Timeout | undefined;
  try {
    await baton.ready();
    const readyMs = performance.now() - t0;
    await Promise.race([
      whenArmed,
      new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () =>
            reject(new Error(`bench: no wake timer armed for the earliest due row in ${ARM_TIMEOUT_MS} ms`)),
          ARM_TIMEOUT_MS,
        );
      }),
    ]);
    return [readyMs, armedAt - t0];
  } finally {
    clearTimeout(timeout);
    await baton.close();
    await store.close();
  }
}

export async function footprintAndRecovery(path: string, n: number, concurrency: number): Promise<Footprint> {
  const { heap, db, holdMs, earliest } = await holdAndMeasure(path, n, concurrency);
  const ready: number[] = [];
  const recovery: number[] = [];
  for (let r = 0; r < RECOVERY_ROUNDS; r++) {
    const [readyMs, armedMs] = await restart(path, concurrency, earliest);
    ready.push(readyMs);
    recovery.push(armedMs);
  }
  return {
    heapBytesPerPending: heap,
    dbBytesPerPending: db,
    holdMs,
    recoveryMs: median(recovery),
    readyMs: median(ready),
  };
}
