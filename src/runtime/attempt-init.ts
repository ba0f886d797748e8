/**
 * What an attempt's context is made of, as one object. The context reads the run, the store and
 * the clock through it, and its hooks into the engine (its logger, fetching a reference, starting a
 * child run) are methods here rather than closures made per attempt.
 *
 * Why one object: a thousand attempts start together and wait together, and everything each one
 * holds while its body runs is copied by the young generation's collector while their deadlines
 * come due (issue 18 item 5: timeout detection p99). An options object of 25 fields, three
 * closures and their context, and the same fields copied again onto the context were ~600 bytes of
 * that per attempt.
 */
import type { Logger } from 'pino';
import type { AttemptContextInit } from './attempt-context.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import { fetchReference } from './fetch-reference.ts';
import type { AttemptSummary } from './finish-attempt.ts';
import { type InvokeOptions, startChild } from './invoke-child.ts';
import type { LazyAbort } from './lazy-abort.ts';
import type { PreparedAttempt } from './prepare-attempt.ts';
import type { CheckpointView, DependencyOutput } from './task-context.ts';
import type { TimeKeeperInit } from './time-keeper.ts';

/** An attempt's logger: a child of the engine's, naming the run, its task and the attempt. */
export function attemptLogger(engine: Engine, s: Pick<AttemptSummary, 'run'>): Logger {
  return engine.logger.child({ runId: s.run.id, task: s.run.name, attempt: s.run.attempt });
}

export class AttemptInit implements AttemptContextInit {
  readonly memo: Map<string, unknown> | undefined;
  readonly lastCheckpoint: CheckpointView | undefined;
  readonly lastSeq: number;
  readonly dependencies: Record<string, DependencyOutput>;
  /** When the run's time started counting (its first claim), for the time keeper. */
  private readonly startMs: number;
  /** Built on first use: only an attempt that logs pays for its child logger. */
  private log_: Logger | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly s: AttemptSummary,
    readonly abort: LazyAbort,
    prepared: PreparedAttempt,
  ) {
    this.memo = prepared.memo;
    this.lastCheckpoint = prepared.lastCheckpoint;
    this.lastSeq = prepared.lastSeq;
    this.dependencies = prepared.dependencies;
    this.startMs = s.run.startedAt ?? engine.clock.now();
  }

  get store() {
    return this.engine.store;
  }
  get clock() {
    return this.engine.clock;
  }
  get fence() {
    return this.s.fence;
  }
  get runId() {
    return this.s.run.id;
  }
  get rootId() {
    return this.s.run.rootId;
  }
  get stepId() {
    return this.s.run.stepId;
  }
  get taskName() {
    return this.s.task.name;
  }
  get attempt() {
    return this.s.run.attempt;
  }
  get timeoutMs() {
    return this.s.timeoutMs;
  }
  get deadlineAt() {
    return this.s.run.deadlineAt;
  }
  get version() {
    return this.s.task.version;
  }
  get mode() {
    return this.s.mode;
  }
  get fast() {
    return this.s.options.fast === true;
  }

  /** Built when asked (the time keeper, a task thread): most attempts never ask. */
  get time(): TimeKeeperInit {
    const { task, run, policy } = this.s;
    // Assigned, not spread from conditional objects.
    const checkpoints: TimeKeeperInit['checkpoints'] = {};
    if (task.agent !== undefined) checkpoints.agent = task.agent;
    if (task.checkpointEvery !== null) checkpoints.every = task.checkpointEvery;
    const time: TimeKeeperInit = {
      startMs: this.startMs,
      budgetMs: run.budgetMs ?? policy.agentTimeoutMs,
      checkpoints,
      itemsAnalyzed: this.lastCheckpoint?.itemsAnalyzed ?? 0,
    };
    if (task.thresholds) time.thresholds = task.thresholds;
    if (task.degradation) time.degradation = task.degradation;
    return time;
  }

  log(): Logger {
    this.log_ ??= attemptLogger(this.engine, this.s);
    return this.log_;
  }

  fetchRef(reference: unknown, signal: AbortSignal): Promise<unknown> {
    return fetchReference(this.engine, this.s.run, this.s.task, reference, signal);
  }

  startChild(child: TaskDefinition, input: unknown, options: InvokeOptions, id: string): Promise<void> {
    return startChild(this.engine, this.s.run, child, input, options, id);
  }
}
