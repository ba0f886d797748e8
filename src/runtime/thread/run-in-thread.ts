/**
 * Runs one attempt's task body in a worker thread, so that a task that never yields (a CPU-bound
 * loop) can still be stopped: the engine calls `terminate()` at the hard deadline (timeout + grace)
 * and the thread is gone, whatever it was doing.
 *
 * Lifecycle: starting → running → settled (the thread posted `done`, crashed, exited, or was
 * terminated) → exited. `result` settles exactly once; the Worker is terminated as soon as the task
 * has settled, so no thread outlives its attempt. After `terminate()` no message from the thread is
 * applied and no call is answered; the AttemptContext (closed by the engine) refuses late writes.
 */
import { Worker } from 'node:worker_threads';
import { BatonError, deserializeError, serializeError } from '../../core/index.ts';
import type { AttemptContext } from '../attempt-context.ts';
import type { TimeKeeperInit } from '../time-keeper.ts';
import { serveThreadMessage, type ThreadBridge } from './serve-thread-calls.ts';
import { threadEntry, toModuleUrl } from './thread-entry.ts';
import { plainBindings } from './thread-logger.ts';
import { isMessage, type ParentToThread, type ThreadInit, type ThreadToParent } from './thread-messages.ts';

export interface ThreadAttemptOptions {
  /** The module that exports the task: a file URL (its `import.meta.url`) or an absolute path. */
  module: string;
  /** The task's name; the thread looks for it among the module's exports. */
  taskName: string;
  /** The validated input (structured-clone data). */
  input: unknown;
  /** The parent-side context: every write of the thread goes through it, fenced. */
  ctx: AttemptContext;
  /** The plain data `ctx.time` was built from; the thread builds its own TimeKeeper from it. */
  time: TimeKeeperInit;
}

export interface ThreadAttempt {
  /** The task's return value, or its error rebuilt with its code and message. */
  readonly result: Promise<unknown>;
  /** Ends the thread (idempotent); resolves once it has stopped. */
  terminate(): Promise<void>;
  /** The Worker's thread id, or -1 when the thread could not be started. */
  readonly threadId: number;
  /** Resolves with the thread's exit code once it has stopped. */
  readonly exited: Promise<number>;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A handle for a thread that never started: `result` rejects with `error`. */
function notStarted(error: unknown): ThreadAttempt {
  const result = Promise.reject(error);
  result.catch(() => {});
  return { result, terminate: () => Promise.resolve(), threadId: -1, exited: Promise.resolve(0) };
}

function threadInit(o: ThreadAttemptOptions, module: string): ThreadInit {
  const { ctx } = o;
  return {
    module,
    taskName: o.taskName,
    input: o.input,
    runId: ctx.runId,
    rootId: ctx.rootId,
    stepId: ctx.stepId,
    attempt: ctx.attempt,
    timeoutMs: ctx.timeoutMs,
    lastCheckpoint: ctx.lastCheckpoint,
    dependencies: { ...ctx.dependencies },
    mode: ctx.mode,
    fast: ctx.fast,
    time: { ...o.time, itemsAnalyzed: ctx.time.itemsAnalyzed },
    log: { level: ctx.log.level, bindings: plainBindings(ctx.log) },
    ...(ctx.signal.aborted ? { abortReason: serializeError(ctx.signal.reason) } : {}),
  };
}

/**
 * Starts the task in a new worker thread. Never throws: a bad option, an input that cannot be
 * cloned, or a missing tsx all come back as a rejected `result`.
 */
export function startThreadAttempt(o: ThreadAttemptOptions): ThreadAttempt {
  const { ctx, taskName } = o;
  let worker: Worker;
  let init: ThreadInit;
  try {
    const module = toModuleUrl(o.module);
    init = threadInit(o, module);
    const entry = threadEntry(module);
    try {
      worker = new Worker(entry, { workerData: init });
    } catch (err) {
      if (err instanceof Error && err.name === 'DataCloneError')
        throw new BatonError(
          'INVALID_INPUT',
          `the input of task "${taskName}" cannot be passed to its thread: ${err.message}`,
          {
            cause: err,
            data: { taskName },
          },
        );
      throw new BatonError(
        'TASK_FAILED',
        `the thread of task "${taskName}" could not start: ${message(err)}`,
        {
          cause: err,
          data: { taskName },
        },
      );
    }
  } catch (err) {
    return notStarted(err);
  }

  let settled = false;
  let closed = false;
  let terminating: Promise<void> | undefined;
  let resolveResult: (value: unknown) => void = () => {};
  let rejectResult: (error: unknown) => void = () => {};
  const result = new Promise<unknown>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  // The engine may stop listening at the deadline; a late rejection must not become unhandled.
  result.catch(() => {});
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve));

  const send = (m: ParentToThread) => {
    if (closed) return;
    try {
      worker.postMessage(m);
    } catch (err) {
      ctx.log.warn({ err: serializeError(err) }, 'could not answer the task thread');
    }
  };
  const onAbort = () => send({ type: 'abort', reason: serializeError(ctx.signal.reason) });
  if (!ctx.signal.aborted) ctx.signal.addEventListener('abort', onAbort, { once: true });

  const stop = (): Promise<void> => {
    terminating ??= (async () => {
      closed = true;
      await worker.terminate();
      await exited;
    })();
    return terminating;
  };
  const settle = (outcome: { ok: true; value: unknown } | { ok: false; error: unknown }) => {
    if (settled) return;
    settled = true;
    ctx.signal.removeEventListener('abort', onAbort);
    if (outcome.ok) resolveResult(outcome.value);
    else rejectResult(outcome.error);
    // Whatever ended the task, its thread ends too: nothing it left running outlives the attempt.
    void stop();
  };
  const terminate = (): Promise<void> => {
    settle({
      ok: false,
      error: new BatonError(
        'CANCELLED',
        `the thread of task "${taskName}" was terminated before the task finished`,
        {
          ...(ctx.signal.aborted ? { cause: ctx.signal.reason } : {}),
          data: { taskName },
        },
      ),
    });
    return stop();
  };

  const bridge: ThreadBridge = { ctx, bindings: init.log.bindings, reply: send };
  worker.on('message', (m: unknown) => {
    if (closed || !isMessage<ThreadToParent>(m)) return;
    if (m.type !== 'done') serveThreadMessage(bridge, m);
    else if (m.ok) settle({ ok: true, value: m.value });
    else settle({ ok: false, error: deserializeError(m.error) });
  });
  worker.on('messageerror', (err) =>
    ctx.log.warn({ err: serializeError(err) }, 'a message from the task thread could not be read'),
  );
  worker.on('error', (err) =>
    settle({
      ok: false,
      error: new BatonError('TASK_FAILED', `the thread of task "${taskName}" crashed: ${message(err)}`, {
        cause: err,
        data: { taskName },
      }),
    }),
  );
  worker.on('exit', (code) =>
    settle({
      ok: false,
      error: new BatonError(
        'TASK_FAILED',
        `the thread of task "${taskName}" exited (code ${code}) before the task finished`,
        {
          data: { taskName, exitCode: code },
        },
      ),
    }),
  );

  return { result, terminate, threadId: worker.threadId, exited };
}
