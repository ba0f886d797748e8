/**
 * `ctx.invoke(task, input)`: a task starts a child run and awaits its outcome durably.
 *
 * The child's id is derived from the parent's id and the call's memo key, so a replay — or an
 * attempt that crashed between creating the child and recording the step — finds the same child
 * instead of starting a second one. The child is a task run with `parent_id` = the parent (shown as
 * its child by `baton show`, the HTTP API and the events, which share the parent's root). When it
 * ends, the same transaction wakes a parent suspended on it (`store/run-rules.ts`, planParentWake).
 */
import { createHash } from 'node:crypto';
import { BatonError, type SerializedError, type TimeoutResult } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import { startTask } from './start-run.ts';
import type { DurableOptions } from './task-context.ts';

/** Options of ctx.invoke: the child's budget (absolute or a share of the parent's) and its priority. */
export interface InvokeOptions extends DurableOptions {
  /** The child's time budget. @default the child task's, capped by what is left of the parent's */
  budget?: Duration;
  /** The child's budget as a share (0 < share ≤ 1) of the parent's remaining budget. */
  budgetShare?: number;
  priority?: number;
}

/** How an invoked child ended, by status: only a succeeded child's output has the task's type. */
export type InvokeOutcome<O> =
  | { runId: string; status: 'succeeded'; output: O }
  /** Ran out of time (or continued with partial results): the protocol's timeout result. */
  | { runId: string; status: 'partial'; output: TimeoutResult }
  | { runId: string; status: 'failed' | 'cancelled' | 'expired'; error: SerializedError };

const MAX_ID = 200;

/** `<parent>:invoke-1`, or a hash when the key is not id-safe or the id grows too long. */
export function childIdOf(parentId: string, key: string): string {
  const suffix = key.replace(/^baton:invoke:/, '');
  const plain = /^\d+$/.test(suffix) ? `invoke-${suffix}` : suffix;
  const id = `${parentId}:${plain}`;
  if (/^[A-Za-z0-9_-]+$/.test(plain) && id.length <= MAX_ID) return id;
  const hash = createHash('sha256').update(`${parentId}\n${key}`).digest('hex').slice(0, 20);
  return `${parentId.slice(0, MAX_ID - 30)}:i-${hash}`;
}

/** Starts the child unless a previous attempt already did (same id). */
export async function startChild(
  engine: Engine,
  parent: RunRecord,
  task: TaskDefinition,
  input: unknown,
  options: InvokeOptions,
  id: string,
): Promise<void> {
  if (await engine.store.getRun(id)) return;
  engine.tasks.register(task);
  const budgetMs = childBudget(engine, parent, task, options);
  await startTask(
    engine,
    task,
    input,
    {
      ...(budgetMs !== null ? { budget: budgetMs } : {}),
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
      ...(parent.source !== null ? { source: parent.source } : {}),
    },
    { id, parentId: parent.id, rootId: parent.rootId },
  );
}

function childBudget(
  engine: Engine,
  parent: RunRecord,
  task: TaskDefinition,
  options: InvokeOptions,
): number | null {
  const remaining = parent.deadlineAt === null ? null : Math.max(0, parent.deadlineAt - engine.clock.now());
  if (options.budgetShare !== undefined) {
    const share = options.budgetShare;
    if (typeof share !== 'number' || !(share > 0 && share <= 1))
      throw new BatonError(
        'INVALID_OPTION',
        `ctx.invoke budgetShare must be a number above 0 and at most 1, got ${JSON.stringify(share)}`,
      );
    if (remaining === null)
      throw new BatonError(
        'INVALID_OPTION',
        `ctx.invoke budgetShare needs a parent with a time budget; run ${parent.id} has none`,
      );
    return Math.floor(remaining * share);
  }
  const own =
    options.budget !== undefined ? parseDuration(options.budget, 'ctx.invoke budget') : task.budgetMs;
  if (remaining === null) return own;
  return own === null ? remaining : Math.min(own, remaining);
}

/** The outcome of an ended child; undefined while it is still open. */
export function outcomeOf<O>(child: RunRecord): InvokeOutcome<O> | undefined {
  if (child.status === 'queued' || child.status === 'running' || child.status === 'waiting') return undefined;
  if (child.status === 'succeeded')
    return { runId: child.id, status: 'succeeded', output: child.output as O };
  if (child.status === 'partial')
    return { runId: child.id, status: 'partial', output: child.output as TimeoutResult };
  const error: SerializedError = child.error ?? {
    name: 'BatonError',
    code: child.status === 'cancelled' ? 'CANCELLED' : 'TASK_FAILED',
    message: `run ${child.id} ended ${child.status}`,
  };
  return { runId: child.id, status: child.status, error };
}
