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

/** Resolves with the run once it is in a terminal state. */
export async function waitForTerminal(
  engine: Engine,
  id: string,
  pollMs: number,
  signal?: AbortSignal,
): Promise<RunRecord> {
  const first = await requireRun(engine, id);
  if (isTerminal(first.status)) return first;
  return new Promise<RunRecord>((resolve, reject) => {
    let timer: ReturnType<Engine['clock']['setTimer']> | undefined;
    let done = false;
    const finish = (run: RunRecord | undefined, error?: unknown) => {
      if (done) return;
      done = true;
      unsubscribe();
      engine.clock.clearTimer(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) reject(error);
      else resolve(run as RunRecord);
    };
    const check = () => {
      engine.store.getRun(id).then(
        (run) => {
          if (!run) finish(undefined, new BatonError('RUN_NOT_FOUND', `run ${id} was deleted while waiting`));
          else if (isTerminal(run.status)) finish(run);
        },
        (err: unknown) => finish(undefined, err),
      );
    };
    const poll = () => {
      timer = engine.clock.setTimer(pollMs, () => {
        check();
        if (!done) poll();
      });
    };
    const unsubscribe = engine.store.onEvents((events) => {
      if (events.some((e) => e.runId === id && TERMINAL_EVENTS.has(e.type))) check();
    });
    const onAbort = () => finish(undefined, signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    poll();
    check();
  });
}

export interface FollowOptions {
  /** Keep following after the run ends (until the signal aborts). @default false */
  forever?: boolean;
  /** Start after this event id (SSE Last-Event-ID). @default 0 */
  afterId?: number;
  signal?: AbortSignal;
}

/**
 * The run's events, past then live. A top-level run includes its steps' events. Ends after the
 * run's terminal event unless `forever`.
 */
export async function* followEvents(
  engine: Engine,
  id: string,
  pollMs: number,
  options: FollowOptions = {},
): AsyncGenerator<BatonEvent> {
  const run = await requireRun(engine, id);
  const query = run.rootId === run.id ? { rootId: id } : { runId: id };
  let lastId = options.afterId ?? 0;
  let wake: (() => void) | undefined;
  let pending = false;
  let drained = false;
  const unsubscribe = engine.store.onEvents((events) => {
    if (events.some((e) => (query.rootId ? e.rootId === id : e.runId === id))) {
      pending = true;
      wake?.();
    }
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  try {
    for (;;) {
      pending = false;
      const batch = await engine.store.readEvents({ ...query, afterId: lastId, limit: 1000 });
      let ended = false;
      for (const e of batch) {
        lastId = e.id;
        yield e;
        if (e.runId === id && TERMINAL_EVENTS.has(e.type)) ended = true;
      }
      if (options.signal?.aborted) return;
      if (batch.length === 1000 || pending) continue;
      if (!options.forever) {
        if (ended || drained) return;
        const now = await engine.store.getRun(id);
        // Ended before we caught up: read once more so the final events are not missed.
        if (!now || isTerminal(now.status as RunStatus)) {
          drained = true;
          continue;
        }
      }
      await new Promise<void>((resolve) => {
        const timer = engine.clock.setTimer(pollMs, () => resolve());
        wake = () => {
          engine.clock.clearTimer(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener('abort', onAbort);
  }
}
