/**
 * How late held results reach the user (see bench/delivery.ts): 10,000 scheduled runs whose results
 * are all held before the first is due, and the floor, 10,000 plain timers due over the same window.
 */
import { createBaton } from '../src/index.ts';
import { openSqliteStore, sqliteDriver } from '../src/store/index.ts';
import {
  countEvents,
  echoTool,
  indexOf,
  runIds,
  spread,
  startScheduled,
  wallToMonotonic,
} from './_delivery-runs.ts';

const { Database } = sqliteDriver();

export interface Lateness {
  /** Lateness of each delivery in ms (index = run index). */
  samples: number[];
  /** First due instant to the last delivery seen. */
  drainMs: number;
  /** Commits of the store from the first due instant to the last delivery, per delivery. */
  commitsPerDelivery: number;
  /** CPU time of this process (user + system) from the first due instant to the last delivery, per delivery. */
  cpuUsPerDelivery: number;
  /** From the moment every result was held to the first due instant. */
  heldMarginMs: number;
  /** Enqueue plus execution of all runs until every result was held. */
  holdMs: number;
}

/** `n` plain `setTimeout`s armed in one loop, due over `windowMs` after `leadMs`; each notes how late it fired. */
export function floorLateness(n: number, leadMs: number, windowMs: number): Promise<number[]> {
  return new Promise((resolve) => {
    const lateness = new Array<number>(n);
    let fired = 0;
    const first = performance.now() + leadMs;
    for (let i = 0; i < n; i++) {
      const due = first + (i * windowMs) / n;
      setTimeout(() => {
        lateness[i] = performance.now() - due;
        if (++fired === n) resolve(lateness);
      }, due - performance.now());
    }
  });
}

/** Every run has exactly one tool:result in the database, and every run succeeded. */
function checkDelivered(path: string, n: number): void {
  const db = new Database(path, { readonly: true });
  try {
    const row = db
      .prepare(
        `SELECT count(*) AS runs, sum(c = 1) AS once FROM (
           SELECT run_id, count(*) AS c FROM events WHERE type = 'tool:result' GROUP BY run_id)`,
      )
      .get() as { runs: number; once: number | null };
    const succeeded = (
      db.prepare("SELECT count(*) AS n FROM runs WHERE status = 'succeeded'").get() as { n: number }
    ).n;
    if (row.runs !== n || row.once !== n || succeeded !== n)
      throw new Error(
        `bench: the database has tool:result events for ${row.runs} runs (${row.once ?? 0} exactly once) and ${succeeded} succeeded runs; expected ${n}`,
      );
  } finally {
    db.close();
  }
}

/**
 * Starts `n` scheduled runs due over `windowMs`, the first `leadMs` after the enqueue began, waits
 * until every result is held, then measures when each `tool:result` reaches a committed-events
 * listener in this process.
 */
export async function engineLateness(
  path: string,
  n: number,
  leadMs: number,
  windowMs: number,
  concurrency: number,
): Promise<Lateness> {
  const store = openSqliteStore(path);
  const baton = createBaton({ store, worker: { concurrency } });
  const tool = echoTool();
  baton.register(tool);
  const toMono = wallToMonotonic();
  const ids = runIds('late', n);
  const seenAt = new Array<number>(n).fill(Number.NaN);
  const results = new Array<number>(n).fill(0);
  let held: ReturnType<typeof countEvents> | undefined;
  let delivered: ReturnType<typeof countEvents> | undefined;
  try {
    await baton.ready();
    const t0 = performance.now();
    const dues = spread(Date.now() + leadMs, windowMs, n);
    const schedules = dues.map((d) => new Date(d).toISOString());
    held = countEvents(store, 'delivery:held', n);
    delivered = countEvents(store, 'tool:result', n, (e, at) => {
      const i = indexOf(e.runId);
      results[i] = (results[i] ?? 0) + 1;
      seenAt[i] = at;
    });
    const firstDue = toMono(dues[0] as number);
    // A result finished after its due instant is delivered at once, never held: fail clearly, not as a stall.
    let tooLate: NodeJS.Timeout | undefined;
    const dueFirst = new Promise<never>((_, reject) => {
      tooLate = setTimeout(
        () =>
          reject(
            new Error(
              `bench: only ${held?.seen()} of ${n} results were held at the first due instant, ${leadMs} ms after the enqueue began (the machine is slower than the lead assumed)`,
            ),
          ),
        firstDue - performance.now(),
      );
    });
    try {
      const allHeld = held.done;
      await Promise.race([startScheduled(baton, tool, ids, schedules).then(() => allHeld), dueFirst]);
    } finally {
      clearTimeout(tooLate);
    }
    const heldAt = performance.now();
    if (delivered.seen() > 0) throw new Error(`bench: ${delivered.seen()} results were delivered early`);
    // Commits from the first due instant on: what delivering cost, not the polls while waiting.
    let commitsBefore = store.commitStats.commits;
    let cpuBefore = process.cpuUsage();
    const mark = setTimeout(() => {
      commitsBefore = store.commitStats.commits;
      cpuBefore = process.cpuUsage();
    }, firstDue - performance.now());
    await delivered.done;
    clearTimeout(mark);
    const commits = store.commitStats.commits - commitsBefore;
    const cpu = process.cpuUsage(cpuBefore);
    const last = Math.max(...seenAt);
    // A duplicate would show here (counted per run) and in the database check below.
    await new Promise((r) => setTimeout(r, 500));
    const twice = results.filter((c) => c !== 1).length;
    if (twice > 0) throw new Error(`bench: ${twice} runs did not see exactly one tool:result`);
    checkDelivered(path, n);
    return {
      samples: seenAt.map((at, i) => at - toMono(dues[i] as number)),
      drainMs: last - firstDue,
      commitsPerDelivery: commits / n,
      cpuUsPerDelivery: (cpu.user + cpu.system) / n,
      heldMarginMs: firstDue - heldAt,
      holdMs: heldAt - t0,
    };
  } finally {
    held?.stop();
    delivered?.stop();
    await baton.close();
    await store.close();
  }
}
