/**
 * End-to-end throughput of trivial runs: enqueue `count` runs with `baton.start` (chunks started
 * together, so their inserts share commits) and wait until one committed-events listener has seen
 * `count` `run:succeeded` events. Waiting on the event stream instead of `count` `run.result()`
 * calls keeps the measurement from paying for 10,000 watchers.
 */
import { createBaton, defineTask } from '../src/index.ts';
import { openSqliteStore } from '../src/store/index.ts';

const CHUNK = 500;
/** No run finishing for this long means the engine is stuck, not slow: fail instead of hanging. */
const STALL_MS = 15_000;

export interface Throughput {
  perSecond: number;
  elapsedMs: number;
  commitsPerRun: number;
}

export async function measureThroughput(
  path: string,
  concurrency: number,
  count: number,
): Promise<Throughput> {
  const store = openSqliteStore(path);
  const baton = createBaton({ store, worker: { concurrency } });
  const task = defineTask({ name: 'bench.noop', retry: false, run: () => 'ok' });
  baton.register(task);
  let watchdog: NodeJS.Timeout | undefined;
  try {
    await baton.ready();
    let succeeded = 0;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const unsubscribe = store.onEvents((events) => {
      for (const e of events) if (e.type === 'run:succeeded' && ++succeeded === count) allDone();
    });
    const stalled = new Promise<never>((_, reject) => {
      let seen = -1;
      let since = performance.now();
      watchdog = setInterval(() => {
        if (succeeded !== seen) {
          seen = succeeded;
          since = performance.now();
        } else if (performance.now() - since > STALL_MS)
          reject(new Error(`bench: stuck at ${succeeded}/${count} succeeded runs for ${STALL_MS} ms`));
      }, 1_000);
    });
    const commitsBefore = store.commitStats.commits;
    const t0 = performance.now();
    const enqueue = async () => {
      for (let i = 0; i < count; i += CHUNK) {
        const n = Math.min(CHUNK, count - i);
        await Promise.all(Array.from({ length: n }, (_, k) => baton.start(task, { i: i + k })));
      }
    };
    await Promise.race([Promise.all([enqueue(), done]), stalled]);
    const elapsedMs = performance.now() - t0;
    const commits = store.commitStats.commits - commitsBefore;
    unsubscribe();
    const counts = await store.countRuns();
    if (counts.succeeded !== count)
      throw new Error(`bench: expected ${count} succeeded runs, the store has ${JSON.stringify(counts)}`);
    return {
      perSecond: count / (elapsedMs / 1000),
      elapsedMs,
      commitsPerRun: commits / count,
    };
  } finally {
    clearInterval(watchdog);
    await baton.close();
    await store.close();
  }
}
