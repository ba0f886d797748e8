/**
 * TTL sweeps off the event loop. Deleting expired runs is a write like any other, and on the loop a
 * sweep held it for the whole transaction — and, on a loaded machine, for however long the kernel
 * preempted the thread inside it (the retention bench measured the loop held p99 7–9 ms at load 6–8
 * with 1 ms sweeps). So a worker thread with its own connection runs each sweep's transaction
 * (sweep-plan.ts) while the store's writes are held (queued, as for the checkpointer's catch-up):
 * SQLite has one writer, and a write of the loop's connection meeting the sweep's lock would wait for
 * it on the loop. Timers, reads and HTTP go on meanwhile; writes wait about one sweep slice.
 *
 * The thread starts on the first sweep (before the writes are held: starting it takes tens of
 * milliseconds), so a store that never sweeps never has one. Its commits do not sync: a sweep only
 * deletes what has expired, the store's next durable commit syncs the log with the sweep's frames in
 * it, and a sweep lost with the power leaves the runs for the next one.
 */
import { Worker } from 'node:worker_threads';
import { BatonError } from '../../core/index.ts';
import { SWEEP_SQL, type SweepOutcome, type SweepPlan } from './sweep-plan.ts';
import { CONNECTION_THREAD } from './thread-source.ts';

/** The thread's code, CommonJS evaluated in the worker: one sweep transaction per message. */
const THREAD_SOURCE = `${CONNECTION_THREAD}
const { performance } = require('node:perf_hooks');
const sql = workerData.sql;
// No fdatasync of its own: the store's next durable commit syncs the WAL, these frames with it (the
// log is sequential); a sweep lost with the power only leaves expired runs for the next sweep.
db.pragma('synchronous = NORMAL');
// Checkpoints are the checkpointer's (checkpointer.ts).
db.pragma('wal_autocheckpoint = 0');
db.exec(sql.prepare);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const clear = db.prepare(sql.clear);
const pick = db.prepare(sql.pick);
const deletes = sql.deletes.map((s) => db.prepare(s));
const vacuum = db.prepare(sql.vacuum);
parentPort.postMessage('ready');
parentPort.on('message', (m) => {
  if (closing(m)) return;
  try {
    begin.run();
    const t0 = performance.now();
    clear.run();
    const trees = pick.run(m.now, m.batch).changes;
    let runs = 0;
    if (trees > 0) for (const d of deletes) runs = d.run().changes;
    const t1 = performance.now();
    let vacuumMs = -1;
    if (trees > 0 && m.vacuum) {
      vacuum.run();
      vacuumMs = performance.now() - t1;
    }
    const t2 = performance.now();
    commit.run();
    parentPort.postMessage({ ok: true, out: { trees, runs, workMs: t1 - t0, vacuumMs, commitMs: performance.now() - t2 } });
  } catch (e) {
    if (db.inTransaction) db.prepare('ROLLBACK').run();
    // SQLite opens a file it may not write read-only, silently, and the connection stays so: every
    // later sweep of this thread would fail after the file became writable again. It retires; the
    // next sweep starts a new thread.
    const readOnly = typeof (e && e.code) === 'string' && e.code.startsWith('SQLITE_READONLY');
    parentPort.postMessage({ ok: false, message: String(e && e.message), code: e && e.code, gone: readOnly });
    if (readOnly) {
      db.close();
      parentPort.close();
    }
  }
});
`;

type Reply = { ok: true; out: SweepOutcome } | { ok: false; message: string; code?: string; gone?: boolean };

export interface Sweeper {
  /** Runs one sweep transaction on the thread, the store's writes held meanwhile. */
  sweep(plan: SweepPlan): Promise<SweepOutcome>;
  close(): Promise<void>;
  /** Whether a thread was started (close() then has to wait for it). */
  readonly started: boolean;
  /** Sweeps run, and how long they held the store's writes (ms, wall time: the last, the longest). */
  readonly stats: { sweeps: number; heldLastMs: number; heldMaxMs: number };
}

/**
 * `hold(work)` runs `work` with the store's writes held (WriteQueue.holdWrites); `monotonic` is the
 * store's clock.
 */
export function threadSweeper(
  driver: string,
  file: string,
  hold: <T>(work: () => Promise<T>) => Promise<T>,
  monotonic: () => number,
  /** How long the thread waits for another process's write lock (the store's busy timeout). */
  busyTimeoutMs = 5_000,
  /** Told of each sweep that committed deletes (the checkpointer counts them, see sweeps.ts). */
  afterCommit: (out: SweepOutcome) => void = () => {},
): Sweeper {
  let worker: Worker | undefined;
  let closed = false;
  const waiting: Array<(reply: Reply) => void> = [];
  const stats = { sweeps: 0, heldLastMs: 0, heldMaxMs: 0 };
  /** Sweeps called before close(): it lets them finish (or fail) before it closes the thread. */
  const active = new Set<Promise<unknown>>();

  /** The thread is gone or could not start: the sweep can succeed later (a new thread starts). */
  const unavailable = (why: string, cause?: unknown) =>
    new BatonError('STORE_UNAVAILABLE', `${file}: the TTL sweep did not run: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
      data: { path: file },
    });

  let ready: Promise<Worker> | undefined;
  const started = (): Promise<Worker> => {
    ready ??= new Promise<Worker>((resolve, reject) => {
      const w = thread();
      let failure: unknown;
      const onReady = (m: unknown) => {
        if (m !== 'ready') return;
        w.off('message', onReady);
        resolve(w);
      };
      w.on('message', onReady);
      // Opening its connection failed (the file is gone, unreadable): that error, not just "exited".
      w.once('error', (error) => {
        failure = error;
      });
      w.once('exit', () =>
        reject(
          unavailable(
            `the sweeper thread could not start${failure instanceof Error ? ` (${failure.message})` : ''}`,
            failure,
          ),
        ),
      );
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };

  const thread = (): Worker => {
    if (worker) return worker;
    // No execArgv from the parent: the thread is plain CommonJS (see checkpointer.ts).
    const w = new Worker(THREAD_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { driver, file, sql: SWEEP_SQL, busyTimeoutMs },
    });
    w.unref();
    w.on('message', (reply: Reply | 'ready') => {
      if (reply !== 'ready') waiting.shift()?.(reply);
    });
    const gone = (error?: unknown) => {
      if (worker === w) {
        worker = undefined;
        // The next sweep starts a new thread.
        ready = undefined;
      }
      const why = error instanceof Error ? error.message : 'the sweeper thread exited';
      for (const settle of waiting.splice(0)) settle({ ok: false, message: why, gone: true });
    };
    w.on('error', gone);
    w.on('exit', () => gone());
    worker = w;
    return w;
  };

  const sweepOn = async (plan: SweepPlan): Promise<SweepOutcome> => {
    const w = await started();
    return hold(async () => {
      // The thread may have died while this sweep waited for the writes (behind another sweep or a
      // checkpoint): a message to it would never be answered, and the writes would stay held.
      if (worker !== w) throw unavailable('the sweeper thread exited');
      const since = monotonic();
      try {
        const reply = await new Promise<Reply>((resolve) => {
          waiting.push(resolve);
          w.postMessage(plan);
        });
        if (!reply.ok) {
          if (reply.gone) {
            // A thread that retires (its connection is read-only) takes no more sweeps.
            if (worker === w) {
              worker = undefined;
              ready = undefined;
            }
            throw unavailable(reply.message, Object.assign(new Error(reply.message), { code: reply.code }));
          }
          throw Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {});
        }
        stats.sweeps++;
        if (reply.out.trees > 0) afterCommit(reply.out);
        return reply.out;
      } finally {
        const ms = monotonic() - since;
        stats.heldLastMs = ms;
        if (ms > stats.heldMaxMs) stats.heldMaxMs = ms;
      }
    });
  };

  return {
    stats,
    get started() {
      return worker !== undefined;
    },
    sweep(plan) {
      if (closed) return Promise.reject(new BatonError('STORE_CLOSED', `the store at ${file} is closed`));
      const swept = sweepOn(plan);
      const settled: Promise<unknown> = swept.then(
        () => active.delete(settled),
        () => active.delete(settled),
      );
      active.add(settled);
      return swept;
    },
    async close() {
      closed = true;
      // Sweeps called before close() run first (a sweep still waiting for the thread to start, or
      // for the writes behind another sweep, would otherwise post to a closed thread and wait
      // forever, its hold on the writes with it, and close() behind that hold).
      while (active.size > 0) await Promise.all(active);
      const w = worker;
      worker = undefined;
      ready = undefined;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.ref();
      w.postMessage('close');
      await exited;
    },
  };
}
