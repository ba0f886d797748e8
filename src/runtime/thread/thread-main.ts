/**
 * Entry point of a task thread: loads the module that exports the task, finds the task by name,
 * runs it with a ThreadTaskContext and posts how it ended. The parent terminates the thread after
 * that message, or at the attempt's hard deadline, whichever comes first. The module is imported
 * afresh here: whatever it does at load (open a store, start a runtime) happens again in the thread.
 */
import { isMainThread, type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { BatonError, deserializeError, serializeError } from '../../core/index.ts';
import type { TaskDefinition } from '../define-task.ts';
import { findTask } from './find-task.ts';
import { ThreadRpc, ThreadTaskContext } from './thread-context.ts';
import { forwardingLogger } from './thread-logger.ts';
import { isMessage, type ParentToThread, type ThreadInit, type ThreadToParent } from './thread-messages.ts';

function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function loadTask(init: ThreadInit): Promise<TaskDefinition> {
  let exports: Record<string, unknown>;
  try {
    exports = (await import(init.module)) as Record<string, unknown>;
  } catch (err) {
    throw new BatonError(
      'TASK_NOT_FOUND',
      `cannot load module ${init.module} in the task thread: ${describeError(err)}`,
      {
        cause: err,
        data: { module: init.module, taskName: init.taskName },
      },
    );
  }
  return findTask(exports, init.taskName, init.module);
}

async function runThread(port: MessagePort, init: ThreadInit): Promise<void> {
  const post = (message: ThreadToParent) => port.postMessage(message);
  const controller = new AbortController();
  const rpc = new ThreadRpc(post);
  port.on('message', (message: unknown) => {
    if (!isMessage<ParentToThread>(message)) return;
    if (message.type === 'abort') controller.abort(deserializeError(message.reason));
    else rpc.settle(message);
  });
  if (init.abortReason) controller.abort(deserializeError(init.abortReason));

  let value: unknown;
  try {
    const task = await loadTask(init);
    const log = forwardingLogger(init.log.level, init.log.bindings, (line) => post({ type: 'log', line }));
    const ctx = new ThreadTaskContext(init, rpc, post, controller.signal, log);
    value = await task.run(init.input, ctx);
  } catch (err) {
    post({ type: 'done', ok: false, error: serializeError(err) });
    return;
  }
  try {
    post({ type: 'done', ok: true, value });
  } catch (err) {
    const error = new BatonError(
      'TASK_FAILED',
      `task "${init.taskName}" returned a value that cannot be passed out of its thread (${describeError(err)}); return plain data`,
      { data: { taskName: init.taskName } },
    );
    post({ type: 'done', ok: false, error: serializeError(error) });
  }
}

if (!isMainThread && parentPort) await runThread(parentPort, workerData as ThreadInit);
