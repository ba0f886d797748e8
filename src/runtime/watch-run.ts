/**
 * Waiting for a run to end and following its events. Committed events arrive at once from this
 * process's store; a poll on the injected clock picks up what other processes wrote.
 */
import { BatonError, type BatonEvent, isTerminal, type RunStatus } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';

const TERMINAL_EVENTS = new Set([
  'run:succeeded',
  'run:partial',
  'run:failed',
  'run:cancelled',
  'run:expired',
]);

export async function requireRun(engine: Engine, id: string): Promise<RunRecord> {
  const run = await engine.store.getRun(id);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${id}`, { data: { runId: id } });
  return run;
}

/** When a waiter is done with a run; it may look further (a flow's steps) before it answers. */
export type DonePredicate = (run: RunRecord) => boolean | Promise<boolean>;

type Waiter = ((run: RunRecord | undefined, error?: unknown) => void) & {
  done?: DonePredicate;
};

/**
 * Waits for runs to end. One store listener serves every waiter (thousands of HTTP requests may
 * wait at once); a single poll on the injected clock catches ends written by other processes.
 */
export class TerminalWatcher {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private unsubscribe: (() => void) | undefined;
  private unhint: (() => void) | undefined;
  private timer: ReturnType<Engine['clock']['setTimer']> | undefined;
  private hintTimer: ReturnType<Engine['clock']['setTimer']> | undefined;
  /** The store's data version at the last look for other processes' writes (see armPoll). */
  private seenVersion: number | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly pollMs: number,
  ) {}

  /** Resolves when `done(run)` holds (by default: the run reached a terminal state). */
  async wait(
    id: string,
    signal?: AbortSignal,
    done: DonePredicate = (r) => isTerminal(r.status),
  ): Promise<RunRecord> {
    const first = await requireRun(this.engine, id);
    if (await done(first)) return first;
    signal?.throwIfAborted();
    return new Promise<RunRecord>((resolve, reject) => {
      const waiter: Waiter = (run: RunRecord | undefined, error?: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        if (error !== undefined || !run)
          reject(error ?? new BatonError('RUN_NOT_FOUND', `run ${id} was deleted while waiting`));
        else resolve(run);
      };
      const onAbort = () => {
        this.remove(id, waiter);
        reject(signal?.reason);
      };
      waiter.done = done;
      signal?.addEventListener('abort', onAbort, { once: true });
      this.add(id, waiter);
      // The run may have ended between the first read and the subscription.
      this.check([id]);
    });
  }

  private add(id: string, waiter: Waiter): void {
    const set = this.waiters.get(id) ?? new Set();
    this.waiters.set(id, set);
    set.add(waiter);
    this.unsubscribe ??= this.engine.store.onEvents((events) => {
      const ended: string[] = [];
      for (const e of events) {
        if (!TERMINAL_EVENTS.has(e.type) && e.type !== 'run:waiting') continue;
        if (this.waiters.has(e.runId)) ended.push(e.runId);
        // A step that waits (for a decision) may settle what a waiter on its flow waits for.
        if (e.type === 'run:waiting' && e.rootId !== e.runId && this.waiters.has(e.rootId))
          ended.push(e.rootId);
      }
      if (ended.length > 0) this.check(ended);
    });
    // Another process committed events: check the waiters soon (hints are coalesced to one
    // check per 10 ms, however many arrive), not only at the next poll.
    this.unhint ??= this.engine.store.onWake?.((channel) => {
      if (channel !== 'events' || this.hintTimer) return;
      this.hintTimer = this.engine.clock.setTimer(10, () => {
        this.hintTimer = undefined;
        this.check([...this.waiters.keys()]);
      });
    });
    if (!this.timer) {
      this.seenVersion = dataVersionOf(this.engine);
      this.armPoll();
    }
  }

  private remove(id: string, waiter: Waiter): void {
    const set = this.waiters.get(id);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(id);
    if (this.waiters.size === 0) this.idle();
  }

  private idle(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.unhint?.();
    this.unhint = undefined;
    this.engine.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.engine.clock.clearTimer(this.hintTimer);
    this.hintTimer = undefined;
  }

  /**
   * The poll is for ends other processes wrote: this process's own commits reach the waiters through
   * the store's listener. So where the store can tell that no other connection committed since the
   * last look (SQLite's data version), the poll reads nothing; before, every poll read every waited
   * run, 200 reads four times a second for 200 HTTP requests waiting in sync mode.
   */
  private armPoll(): void {
    this.timer = this.engine.clock.setTimer(this.pollMs, () => {
      this.timer = undefined;
      const version = dataVersionOf(this.engine);
      if (version === undefined || version !== this.seenVersion) {
        this.seenVersion = version;
        this.check([...this.waiters.keys()]);
      }
      if (this.waiters.size > 0) this.armPoll();
    });
  }

  private check(ids: readonly string[]): void {
    for (const id of new Set(ids)) {
      this.settle(id).catch((err: unknown) => {
        const set = this.waiters.get(id);
        this.waiters.delete(id);
        for (const w of set ?? []) w(undefined, err);
        if (this.waiters.size === 0) this.idle();
      });
    }
  }

  private async settle(id: string): Promise<void> {
    const run = await this.engine.store.getRun(id);
    const set = this.waiters.get(id);
    if (!set) return;
    for (const w of [...set]) {
      if (run && !(await (w.done ?? ((r: RunRecord) => isTerminal(r.status)))(run))) continue;
      // Answered meanwhile (another check, an abort): answer once.
      if (!set.delete(w)) continue;
      w(run, run ? undefined : new BatonError('RUN_NOT_FOUND', `run ${id} was deleted while waiting`));
    }
    if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
    if (this.waiters.size === 0) this.idle();
  }
}

export interface FollowOptions {
  /** Keep following after the run ends (until the signal aborts). @default false */
  forever?: boolean;
  /** Start after this event id (SSE Last-Event-ID). @default 0 */
  afterId?: number;
  signal?: AbortSignal;
}

/**
 * The run's events, past then live. A top-level run includes its steps' events. Ends when the run
 * has ended — its current end, after any resumes, not the first terminal event in its history —
 * unless `forever`.
 */
export async function* followEvents(
  engine: Engine,
  id: string,
  pollMs: number,
  options: FollowOptions = {},
): AsyncGenerator<BatonEvent> {
  const run = await requireRun(engine, id);
  const query = run.rootId === run.id ? { rootId: id } : { runId: id };
  yield* pollEvents(engine, pollMs, options, {
    query,
    concerns: (e) => (query.rootId ? e.rootId === id : e.runId === id),
    // A terminal event in the history is not the end: a resumed run goes on after it. The run's
    // current status says whether it has ended.
    ended: options.forever
      ? undefined
      : async () => {
          const now = await engine.store.getRun(id);
          return !now || isTerminal(now.status as RunStatus);
        },
  });
}

/**
 * Every run's events in commit order, past (after `afterId`) then live, until the signal aborts:
 * the store-wide stream a dashboard follows. Same wake-ups as `followEvents`: at once for commits
 * in this process, at the next poll for other processes' writes.
 */
export async function* followAllEvents(
  engine: Engine,
  pollMs: number,
  options: Omit<FollowOptions, 'forever'> = {},
): AsyncGenerator<BatonEvent> {
  yield* pollEvents(engine, pollMs, options, { query: {}, concerns: () => true });
}

interface EventStream {
  /** Which events to read: one run's, a tree's, or every run's. */
  query: { runId?: string; rootId?: string };
  /** Whether an event committed in this process belongs to the stream (wakes it at once). */
  concerns: (event: BatonEvent) => boolean;
  /** Whether the stream is over once it has read everything; absent, it goes on until aborted. */
  ended?: () => Promise<boolean>;
}

/**
 * Reads a stream's events in pages, past then live: woken at once by commits in this process and
 * by the store's cross-process hint (Postgres), else at the next poll on the injected clock.
 */
async function* pollEvents(
  engine: Engine,
  pollMs: number,
  options: Omit<FollowOptions, 'forever'>,
  stream: EventStream,
): AsyncGenerator<BatonEvent> {
  let lastId = options.afterId ?? 0;
  let wake: (() => void) | undefined;
  let pending = false;
  let drained = false;
  const unsubscribe = engine.store.onEvents((events) => {
    if (events.some(stream.concerns)) {
      pending = true;
      wake?.();
    }
  });
  // Another process committed events (Postgres): look now rather than at the next poll.
  const unhint = engine.store.onWake?.((channel) => {
    if (channel !== 'events') return;
    pending = true;
    wake?.();
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  // What other connections had committed at the last read (see TerminalWatcher.armPoll).
  let seenVersion: number | undefined;
  let polled = false;
  /** Until the next poll, or a wake-up (a commit of this process or a hint); `polled` says which. */
  const sleep = async (): Promise<void> => {
    polled = await new Promise<boolean>((resolve) => {
      const timer = engine.clock.setTimer(pollMs, () => resolve(true));
      wake = () => {
        engine.clock.clearTimer(timer);
        resolve(false);
      };
    });
    wake = undefined;
  };
  try {
    for (;;) {
      // A poll (not a wake-up) while no other connection committed: nothing new to read.
      if (polled && !pending && !options.signal?.aborted) {
        const version = dataVersionOf(engine);
        if (version !== undefined && version === seenVersion) {
          await sleep();
          continue;
        }
      }
      pending = false;
      polled = false;
      seenVersion = dataVersionOf(engine);
      const batch = await engine.store.readEvents({ ...stream.query, afterId: lastId, limit: 1000 });
      for (const e of batch) {
        lastId = e.id;
        yield e;
      }
      if (options.signal?.aborted) return;
      if (batch.length === 1000 || pending) continue;
      if (stream.ended) {
        if (drained) return;
        // Once ended, one more read, so the last events are not missed (they may have been
        // committed after the read above).
        if (await stream.ended()) {
          drained = true;
          continue;
        }
      }
      await sleep();
    }
  } finally {
    unsubscribe();
    unhint?.();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** The store's data version (Store.dataVersion), or undefined when it cannot tell or answer now. */
function dataVersionOf(engine: Engine): number | undefined {
  try {
    return engine.store.dataVersion?.();
  } catch {
    return undefined;
  }
}
