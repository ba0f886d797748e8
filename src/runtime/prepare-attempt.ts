/**
 * Everything an attempt needs before the task body runs: its memoized steps, its last checkpoint
 * (validated — an unusable one is recorded as an event and the run starts fresh), and the outputs
 * of the flow steps it depends on.
 */
import { newEvent } from '../core/index.ts';
import type { Fence, RunRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import type { CheckpointView, DependencyOutput } from './task-context.ts';

export interface PreparedAttempt {
  /** Recorded steps of the task's version by key; absent when there are none. */
  memo: Map<string, unknown> | undefined;
  /** Sequence number of the newest stored checkpoint, valid or not (0 when none). */
  lastSeq: number;
  lastCheckpoint: CheckpointView | undefined;
  dependencies: Record<string, DependencyOutput>;
}

/**
 * Steps and checkpoints are written only under a lease (fenced), and every claim increments the
 * lease token: a run on its first lease has none, so its first attempt skips both reads. With no
 * flow dependencies either, there is nothing to read at all, and the answer comes back at once
 * rather than as a promise: most attempts are such, and each promise and await is garbage the
 * collector copies while a thousand attempts start together.
 */
export function prepareAttempt(
  engine: Engine,
  run: RunRecord,
  task: TaskDefinition,
  fence: Fence,
): PreparedAttempt | Promise<PreparedAttempt> {
  if (run.leaseToken === 1 && !dependsOnSteps(run))
    return { memo: undefined, lastSeq: 0, lastCheckpoint: undefined, dependencies: {} };
  return readPrepared(engine, run, task, fence);
}

/** A flow step that waits for other steps' outputs (read from its siblings). */
function dependsOnSteps(run: RunRecord): boolean {
  return run.parentId !== null && run.dependsOn.length > 0;
}

async function readPrepared(
  engine: Engine,
  run: RunRecord,
  task: TaskDefinition,
  fence: Fence,
): Promise<PreparedAttempt> {
  const { store } = engine;
  const first = run.leaseToken === 1;
  const [steps, last, siblings] = await Promise.all([
    first ? [] : store.getSteps(run.id),
    first ? undefined : store.getLastCheckpoint(run.id),
    dependsOnSteps(run) ? store.listRuns({ parentId: run.parentId as string, limit: 10_000 }) : [],
  ]);
  let memo: Map<string, unknown> | undefined;
  for (const s of steps) {
    if (s.version !== task.version) continue;
    memo ??= new Map();
    memo.set(s.key, s.output);
  }

  let lastCheckpoint: CheckpointView | undefined;
  if (last) {
    const problem = checkpointProblem(last, task);
    if (problem) {
      await store.appendEvents(
        [newEvent(run.id, 'checkpoint:invalid', { seq: last.seq, reason: problem })],
        fence,
      );
      engine.logger.warn(
        { runId: run.id, seq: last.seq, reason: problem },
        'checkpoint invalid; starting fresh',
      );
    } else {
      lastCheckpoint = {
        state: last.state,
        seq: last.seq,
        itemsAnalyzed: typeof last.record.items_analyzed === 'number' ? last.record.items_analyzed : null,
        savedAt: last.createdAt,
      };
    }
  }

  const dependencies: Record<string, DependencyOutput> = {};
  for (const s of siblings) {
    if (s.stepId && run.dependsOn.includes(s.stepId))
      dependencies[s.stepId] = { output: s.output, incomplete: s.status === 'partial' };
  }
  return { memo, lastSeq: last?.seq ?? 0, lastCheckpoint, dependencies };
}

function checkpointProblem(
  cp: { corrupt?: string; version: number; state: unknown },
  task: TaskDefinition,
): string | undefined {
  if (cp.corrupt) return cp.corrupt;
  if (cp.version !== task.version)
    return `checkpoint was written by version ${cp.version} of task "${task.name}", which is now version ${task.version}`;
  if (task.checkpointSchema) {
    const parsed = task.checkpointSchema.safeParse(cp.state);
    if (!parsed.success)
      return `checkpoint state does not match the task's checkpointSchema: ${parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(state)'}: ${i.message}`)
        .join('; ')}`;
  }
  return undefined;
}
