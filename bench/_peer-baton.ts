/**
 * Baton's side of bench/peers.ts, on real SQLite files (WAL, synchronous=FULL: every commit is
 * fsynced), one process, the system clock.
 */
import { join } from 'node:path';
import { createBaton, defineTask, type TaskContext } from '../src/index.ts';
import { openSqliteStore, type Store, sqliteDriver } from '../src/store/index.ts';
import { type DueAtOnce, dueSamples } from './_peer-due.ts';
import { median } from './_stats.ts';

const CHUNK = 500;

/**
 * The raw fsync'd commit (better-sqlite3, WAL, synchronous=FULL, one-row INSERT in autocommit),
 * median of `n` after 50 warm-up commits: what every durable figure of Baton's stands on, printed
 * so that a slow, shared disk shows as such (Redis does not fsync; Postgres does).
 */
export function commitFloorMs(path: string, n: number): number {
  const db = new (sqliteDriver().Database)(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE floor (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO floor (v) VALUES (?)');
    const samples: number[] = [];
    for (let i = 0; i < n + 50; i++) {
      const t0 = performance.now();
      insert.run(`row ${i}`);
      if (i >= 50) samples.push(performance.now() - t0);
    }
    return median(samples);
  } finally {
    db.close();
  }
}

/** Per `ctx.step` of an `n`-step task at concurrency 1, minus the same loop calling the function directly. */
export async function batonStepMs(path: string, steps: number, rounds: number): Promise<number> {
  const store = openSqliteStore(path);
  const baton = createBaton({ store, worker: { concurrency: 1 } });
  const loop = async (durable: boolean, n: number, ctx: TaskContext) => {
    let sum = 0;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sum += durable ? await ctx.step(`s${i}`, () => i) : await (async () => i)();
    if (sum < 0) throw new Error('unreachable');
    return performance.now() - t0;
  };
  const task = defineTask<{ durable: boolean; n: number }, number>({
    name: 'bench.peer-loop',
    retry: false,
    run: ({ durable, n }, ctx) => loop(durable, n, ctx),
  });
  const time = async (durable: boolean) => {
    const outcome = await (await baton.start(task, { durable, n: steps })).result();
    if (outcome.status !== 'succeeded') throw new Error(`bench: the step loop ended ${outcome.status}`);
    return outcome.output;
  };
  try {
    await time(true);
    const durable: number[] = [];
    const plain: number[] = [];
    for (let r = 0; r < rounds; r++) {
      durable.push(await time(true));
      plain.push(await time(false));
    }
    return (median(durable) - median(plain)) / steps;
  } finally {
    await baton.close();
    await store.close();
  }
}

/** `count` runs all due `leadMs` after the first start (each started with the delay left); lateness = body start − due. */
export async function batonDueAtOnce(
  dir: string,
  count: number,
  leadMs: number,
  concurrency: number,
): Promise<DueAtOnce> {
  const store = openSqliteStore(join(dir, `due-${leadMs}.db`));
  try {
    return await batonDueAtOnceOn(store, count, leadMs, concurrency);
  } finally {
    await store.close();
  }
}

/** The "all due at once" figure on a store already open (SQLite above, Postgres in bench/_pg-peers-latency.ts). */
export async function batonDueAtOnceOn(
  store: Store,
  count: number,
  leadMs: number,
  concurrency: number,
): Promise<DueAtOnce> {
  const due = Date.now() + leadMs;
  const late: number[] = [];
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const task = defineTask({
    name: 'bench.due',
    retry: false,
    run: () => {
      late.push(Date.now() - due);
      if (late.length === count) allDone();
    },
  });
  const baton = createBaton({ store, tasks: [task], worker: { concurrency } });
  try {
    await baton.ready();
    for (let i = 0; i < count; i += CHUNK) {
      const n = Math.min(CHUNK, count - i);
      const delay = due - Date.now();
      await Promise.all(Array.from({ length: n }, () => baton.start(task, {}, { delay })));
    }
    const margin = due - Date.now();
    await done;
    return dueSamples(late, margin);
  } finally {
    await baton.close();
  }
}
