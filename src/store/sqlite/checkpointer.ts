/**
 * Checkpoints off the event loop. A checkpoint copies the WAL into the database file and syncs both;
 * on the loop (SQLite's automatic checkpoint runs inside the COMMIT that crosses 1,000 pages) it held
 * the loop 66–216 ms on a loaded disk. So the store's connection never checkpoints
 * (`wal_autocheckpoint=0`), and a worker thread with its own connection runs
 * `PRAGMA wal_checkpoint(PASSIVE)` at synchronous=FULL: SQLite's own protocol, which syncs the WAL
 * before copying it and the database file before the WAL may be reused, whichever connection or
 * process writes meanwhile. PASSIVE never waits for the writer; it copies what it can.
 *
 * The thread starts on the first request, so a store that commits little never has one. SQLite
 * starts the WAL over only when a write begins with all of it copied, which a checkpoint running
 * beside the writes never leaves: frames come after it. So when the WAL has grown past
 * CATCH_UP_FRAMES, the next checkpoint runs with this store's writes held (queued, not blocking the
 * loop): it copies only the tail the last one left, and the next write starts the WAL over. SQLite's
 * automatic checkpoint holds the writes too, and the loop with them, for the whole copy.
 */
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './driver.ts';
import { CONNECTION_THREAD } from './thread-source.ts';

/** Commits between checkpoint requests: a commit writes a few pages, so ≈ SQLite's 1,000-page default. */
export const CHECKPOINT_EVERY_COMMITS = 200;

/** WAL frames past which the next checkpoint runs with the writes held (≈ 8 MB at 4 KB pages). */
export const CATCH_UP_FRAMES = 2_000;

export interface Checkpointer {
  /**
   * Called after each commit; asks the thread for a checkpoint every so many commits. `weight`
   * counts a commit that wrote as much as several (a sweep's, on its own thread) as that many.
   */
  committed(weight?: number): void;
  close(): Promise<void>;
  /** Whether a thread was started (close() then has to wait for it). */
  readonly started: boolean;
  /** Checkpoints asked for, run off the loop, and how many of them held the writes to catch up. */
  readonly stats: { requested: number; offLoop: number; held: number };
}

/** The thread's code, CommonJS evaluated in the worker: it only checkpoints. */
const THREAD_SOURCE = `${CONNECTION_THREAD}
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
parentPort.on('message', (m) => {
  if (closing(m)) return;
  try {
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    parentPort.postMessage({ ok: true, log: r.log, checkpointed: r.checkpointed });
  } catch (e) {
    parentPort.postMessage({ ok: false, error: String(e && e.message) });
  }
});
`;

interface Reply {
  ok: boolean;
  log?: number;
  checkpointed?: number;
  error?: string;
}

/**
 * `hold(until)` keeps the store's writes queued until the promise settles (WriteQueue.pauseUntil).
 */
export function walCheckpointer(
  db: SqliteDatabase,
  driver: string,
  file: string,
  hold: (until: Promise<void>) => void,
  /** Tests use small numbers. */
  limits = { everyCommits: CHECKPOINT_EVERY_COMMITS, catchUpFrames: CATCH_UP_FRAMES },
): Checkpointer {
  db.pragma('wal_autocheckpoint = 0');
  let worker: Worker | undefined;
  let commits = 0;
  let inFlight = false;
  let closed = false;
  let release: (() => void) | undefined;
  const stats = { requested: 0, offLoop: 0, held: 0 };

  const settleHold = () => {
    release?.();
    release = undefined;
  };

  const onReply = (reply: Reply) => {
    inFlight = false;
    const wasHeld = release !== undefined;
    settleHold();
    if (closed || !reply.ok) return;
    stats.offLoop++;
    // A checkpoint that ran while writes went on cannot let the WAL start over: frames came after
    // it. Once the WAL is large, the next one runs with the writes held, copying only that tail.
    if (wasHeld || (reply.log ?? 0) < limits.catchUpFrames) return;
    stats.held++;
    hold(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    request();
  };

  const request = () => {
    if (closed || inFlight) return;
    if (!worker) {
      // No execArgv from the parent: a worker inherits its --require/--import preloads (tsx's
      // loader, an OpenTelemetry --import), which this plain CommonJS thread never uses. Under tsx
      // they were a third of the thread's start (process CPU, median of 8: 54 -> 36 ms), spent in
      // the middle of a write stream (commit 200 of a fresh store).
      const w = new Worker(THREAD_SOURCE, { eval: true, execArgv: [], workerData: { driver, file } });
      worker = w;
      // Never what keeps the process alive; at exit a checkpoint in progress is safely abandoned.
      w.unref();
      w.on('message', onReply);
      const gone = () => {
        if (worker === w) worker = undefined;
        inFlight = false;
        settleHold();
      };
      w.on('error', gone);
      w.on('exit', gone);
    }
    inFlight = true;
    stats.requested++;
    worker.postMessage('checkpoint');
  };

  return {
    committed(weight = 1) {
      const before = Math.floor(commits / limits.everyCommits);
      commits += weight;
      if (Math.floor(commits / limits.everyCommits) > before) request();
    },
    get started() {
      return worker !== undefined;
    },
    stats,
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      if (!w) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      // Held until its connection is closed, so the store's own close() then folds the WAL in.
      w.ref();
      w.postMessage('close');
      await exited;
    },
  };
}
