/**
 * How late Baton tells a task that its time is up, with many attempts timing out at once.
 *
 * - timeout.detect_lateness_{p50,p99,max}_ms: 1,000 runs of a task with a 50 ms timeout and
 *   `retry: false`, started together on a real SQLite file (WAL, synchronous=FULL) with the system
 *   clock and one worker of concurrency 1,000, so all 1,000 attempts are claimed in one go and run
 *   at once. Each task body notes `performance.now()` when it starts and waits for `ctx.signal`; its
 *   lateness is the moment the signal fired minus (its start + 50 ms). Target: p99 ≤ 10 ms.
 * - timeout.floor_lateness_{p50,p99,max}_ms: the floor, measured in the same run: 1,000 plain
 *   `setTimeout(50)` armed at once, the same lateness measure. It is what Node's timers cost with
 *   1,000 callbacks due together and nothing else to do.
 * Each figure pools ROUNDS rounds of 1,000 (after one warm-up round that is not counted); the floor
 * is sampled just before each engine round, so both see the same machine load.
 */
import { join } from 'node:path';
import { type Baton, createBaton, defineTask, type TaskDefinition } from '../src/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import { type BenchMetric, round, withTempDir } from './_stats.ts';

const ATTEMPTS = 1_000;
const TIMEOUT_MS = 50;
const ROUNDS = 3;
/** No run ending for this long means the engine is stuck, not slow: fail instead of hanging. */
const STALL_MS = 15_000;

/** Nearest-rank percentile of sorted samples. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

function summarize(prefix: string, samples: readonly number[]): BenchMetric[] {
  const sorted = [...samples].sort((a, b) => a - b);
  return [
    { metric: `${prefix}_p50_ms`, value: round(percentile(sorted, 50)), unit: 'ms' },
    { metric: `${prefix}_p99_ms`, value: round(percentile(sorted, 99)), unit: 'ms' },
    { metric: `${prefix}_max_ms`, value: round(sorted[sorted.length - 1] as number), unit: 'ms' },
  ];
}

/** 1,000 plain timers armed in one loop; each notes how late it fired. */
function floorRound(): Promise<number[]> {
  return new Promise((resolve) => {
    const lateness: number[] = [];
    for (let i = 0; i < ATTEMPTS; i++) {
      const armed = performance.now();
      setTimeout(() => {
        lateness.push(performance.now() - (armed + TIMEOUT_MS));
        if (lateness.length === ATTEMPTS) resolve(lateness);
      }, TIMEOUT_MS);
    }
  });
}

/** The task: note when the body starts, wait for the signal, note how late it fired. */
function signalWaiter(lateness: number[]): TaskDefinition {
  return defineTask({
    name: 'bench.await-signal',
    timeout: TIMEOUT_MS,
    retry: false,
    run: (_: unknown, ctx) => {
      const started = performance.now();
      return new Promise<undefined>((resolve) => {
        ctx.signal.addEventListener(
          'abort',
          () => {
            lateness.push(performance.now() - (started + TIMEOUT_MS));
            resolve(undefined);
          },
          { once: true },
        );
      });
    },
  }) as TaskDefinition;
}

/** Starts ATTEMPTS runs in one tick (one commit, one claim) and waits until every one has ended. */
async function engineRound(
  baton: Baton,
  task: TaskDefinition,
  lateness: number[],
  round: string,
): Promise<number[]> {
  const before = lateness.length;
  const ids = Array.from({ length: ATTEMPTS }, (_, i) => `${round}-${i}`);
  const mine = new Set(ids);
  let ended = 0;
  let allEnded!: () => void;
  const done = new Promise<void>((resolve) => {
    allEnded = resolve;
  });
  const off = baton.store.onEvents((events) => {
    for (const e of events)
      if (
        (e.type === 'run:partial' || e.type === 'run:failed' || e.type === 'run:succeeded') &&
        mine.has(e.runId) &&
        ++ended === ATTEMPTS
      )
        allEnded();
  });
  let watchdog: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    let seen = -1;
    let since = performance.now();
    watchdog = setInterval(() => {
      if (ended !== seen) {
        seen = ended;
        since = performance.now();
      } else if (performance.now() - since > STALL_MS)
        reject(new Error(`bench: stuck at ${ended}/${ATTEMPTS} ended runs for ${STALL_MS} ms`));
    }, 1_000);
  });
  try {
    await Promise.all(ids.map((id) => baton.start(task, {}, { id })));
    await Promise.race([done, stalled]);
  } finally {
    clearInterval(watchdog);
    off();
  }
  const samples = lateness.slice(before);
  if (samples.length !== ATTEMPTS)
    throw new Error(`bench: ${samples.length} of ${ATTEMPTS} tasks saw their signal fire`);
  return samples;
}

/** Measured again with one core busy by the harness (issue 18 item 5: targets hold under load). */
export const headline = true;

export default async function bench(): Promise<BenchMetric[]> {
  return withTempDir('timeout', async (dir) => {
    const store = openSqliteStore(join(dir, 'timeout.db'));
    const baton = createBaton({ store, worker: { concurrency: ATTEMPTS } });
    const lateness: number[] = [];
    const task = signalWaiter(lateness);
    baton.register(task);
    const engine: number[] = [];
    const floor: number[] = [];
    try {
      await baton.ready();
      // Warm-up: JIT, the statement cache, the WAL file.
      await floorRound();
      await engineRound(baton, task, lateness, 'warmup');
      for (let r = 0; r < ROUNDS; r++) {
        floor.push(...(await floorRound()));
        engine.push(...(await engineRound(baton, task, lateness, `round${r}`)));
      }
      const outcomes = await store.countRuns();
      if (outcomes.partial !== (ROUNDS + 1) * ATTEMPTS)
        throw new Error(
          `bench: expected every run to end partial, the store has ${JSON.stringify(outcomes)}`,
        );
    } finally {
      await baton.close();
      await store.close();
    }
    return [...summarize('timeout.detect_lateness', engine), ...summarize('timeout.floor_lateness', floor)];
  });
}
