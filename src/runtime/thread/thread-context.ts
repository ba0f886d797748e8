/**
 * The TaskContext a task sees inside its thread. Time, degradation decisions and checkpoint moments
 * are computed here with the thread's own TimeKeeper on the system clock (the parent may be busy, and
 * a ManualClock cannot cross threads); every write — steps, checkpoints, partials, progress, events,
 * logs — goes to the parent, whose AttemptContext fences it with the attempt's lease.
 */

import type { Logger } from 'pino';
import { BatonError, type DegradationDecision, deserializeError } from '../../core/index.ts';
import { type Clock, type Duration, systemClock } from '../../time/index.ts';
import type { Moment } from '../attempt-context.ts';
import type { TaskDefinition } from '../define-task.ts';
import type { InvokeOutcome } from '../invoke-child.ts';
import { runTool } from '../run-tool.ts';
import type {
  ApprovalAnswer,
  ApprovalQuestion,
  CheckpointInfo,
  CheckpointView,
  DependencyOutput,
  DurableOptions,
  TaskContext,
  ToolOptions,
  WaitForResult,
} from '../task-context.ts';
import { TimeKeeper } from '../time-keeper.ts';
import type { CallName, ParentToThread, ThreadCalls, ThreadInit, ThreadToParent } from './thread-messages.ts';

const PROGRESS_EVERY_MS = 200;

const CALL_LABEL: Record<CallName, string> = {
  stepLookup: 'ctx.step',
  stepRecord: 'ctx.step',
  checkpoint: 'ctx.checkpoint',
  checkpointAt: 'ctx.tool',
  partial: 'ctx.partial',
  fetch: 'ctx.fetch',
  sleep: 'ctx.sleep',
};

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Request/response calls to the parent, matched by id. */
export class ThreadRpc {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly post: (message: ThreadToParent) => void) {}

  call<K extends CallName>(
    name: K,
    ...args: Parameters<ThreadCalls[K]>
  ): Promise<ReturnType<ThreadCalls[K]>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.post({ type: 'call', id, name, args });
      } catch (err) {
        // Structured clone refused an argument (a function, a class instance with private state…).
        const why = err instanceof Error ? err.message : String(err);
        reject(
          new BatonError(
            'INVALID_INPUT',
            `${CALL_LABEL[name]} got a value that cannot be passed out of the task thread: ${why}`,
            {
              cause: err,
            },
          ),
        );
        return;
      }
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    });
  }

  settle(reply: Extract<ParentToThread, { type: 'reply' }>): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(deserializeError(reply.error));
  }
}

export class ThreadTaskContext implements TaskContext {
  readonly runId: string;
  readonly rootId: string;
  readonly stepId: string | null;
  readonly taskName: string;
  readonly attempt: number;
  readonly timeoutMs: number;
  readonly clock: Clock = systemClock;
  readonly lastCheckpoint: CheckpointView | undefined;
  readonly dependencies: Readonly<Record<string, DependencyOutput>>;
  readonly mode: string | undefined;
  readonly fast: boolean;
  readonly time: TimeKeeper;
  private lastProgressAt = Number.NEGATIVE_INFINITY;

  constructor(
    init: ThreadInit,
    private readonly rpc: ThreadRpc,
    private readonly post: (message: ThreadToParent) => void,
    readonly signal: AbortSignal,
    readonly log: Logger,
  ) {
    this.runId = init.runId;
    this.rootId = init.rootId;
    this.stepId = init.stepId;
    this.taskName = init.taskName;
    this.attempt = init.attempt;
    this.timeoutMs = init.timeoutMs;
    this.lastCheckpoint = init.lastCheckpoint;
    this.dependencies = init.dependencies;
    this.mode = init.mode;
    this.fast = init.fast;
    this.time = new TimeKeeper(init.time, this.clock, (change, a) =>
      this.post({
        type: 'event',
        event: 'time:mode_changed',
        data: {
          from: change.from,
          to: change.to,
          timeStatus: a.time_status,
          remainingSeconds: a.remaining_seconds,
        },
      }),
    );
  }

  async step<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    const found = await this.rpc.call('stepLookup', key);
    if (found.hit) return found.value as T;
    const started = this.clock.monotonic();
    const value = await fn();
    // JSON here, as AttemptContext does, so what crosses is what a replay would return.
    const plain: unknown = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
    return (await this.rpc.call('stepRecord', key, plain, this.clock.monotonic() - started)) as T;
  }

  async checkpoint(state: unknown, info: CheckpointInfo = {}): Promise<number> {
    if (info.itemsAnalyzed !== undefined) this.time.noteItems(info.itemsAnalyzed);
    // The items count lives here (progress, shouldCheckpoint); the parent records what we say.
    const items = this.time.itemsAnalyzed;
    const seq = await this.rpc.call('checkpoint', state, { ...info, itemsAnalyzed: items });
    this.time.noteCheckpoint(items);
    return seq;
  }

  private async checkpointAt(moment: Moment): Promise<void> {
    const items = this.time.itemsAnalyzed;
    await this.rpc.call('checkpointAt', moment, items);
    this.time.noteCheckpoint(items);
  }

  async partial(...findings: unknown[]): Promise<void> {
    if (findings.length === 0) return;
    await this.rpc.call('partial', findings);
  }

  emit(kind: string, data: Record<string, unknown> = {}): void {
    this.post({ type: 'event', event: 'task:event', data: { kind, data } });
  }

  fetch(reference: unknown): Promise<unknown> {
    return this.rpc.call('fetch', reference) as Promise<unknown>;
  }

  progress(done: number, total?: number): void {
    if (!Number.isFinite(done)) return;
    this.time.noteItems(done);
    // Throttled here too, so a tight loop does not flood the parent with messages it would drop.
    const now = this.clock.monotonic();
    const finished = total !== undefined && done >= total;
    if (!finished && now - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastProgressAt = now;
    this.post(total === undefined ? { type: 'progress', done } : { type: 'progress', done, total });
  }

  // An orchestrating body is not CPU-bound: it belongs in the parent, and the child it starts may
  // run in a thread of its own. (A task definition, with its functions, cannot cross to the parent.)
  invoke<I, O, In = I>(task: TaskDefinition<I, O, In>): Promise<InvokeOutcome<O>> {
    return Promise.reject(
      new BatonError(
        'INVALID_OPTION',
        `ctx.invoke("${task.name}") is not available in a task with isolation: 'thread'; invoke from a task without it (the child may use a thread)`,
      ),
    );
  }

  waitFor<T>(name: string): Promise<WaitForResult<T>> {
    return Promise.reject(
      new BatonError(
        'INVALID_OPTION',
        `ctx.waitFor("${name}") is not available in a task with isolation: 'thread'; wait in a task without it`,
      ),
    );
  }

  requestApproval(question: ApprovalQuestion): Promise<ApprovalAnswer> {
    return Promise.reject(
      new BatonError(
        'INVALID_OPTION',
        `ctx.requestApproval("${question?.key}") is not available in a task with isolation: 'thread'; ask in a task without it`,
      ),
    );
  }

  delay(ms: number): Promise<void> {
    return this.clock.sleep(ms, this.signal);
  }

  // The parent's clock decides when a durable sleep wakes; its reply never comes while the
  // attempt is suspended (the engine ends the thread instead).
  async sleep(duration: Duration, options: DurableOptions = {}): Promise<void> {
    await this.rpc.call('sleep', { duration, ...options });
  }

  async sleepUntil(at: Date | number, options: DurableOptions = {}): Promise<void> {
    await this.rpc.call('sleep', { until: at instanceof Date ? at.getTime() : at, ...options });
  }

  shouldSkip(kind: string): DegradationDecision {
    return this.time.shouldSkip(kind);
  }

  shouldCheckpoint(itemsAnalyzed: number): boolean {
    return this.time.shouldCheckpoint(itemsAnalyzed);
  }

  tool<T, C = T>(
    kind: string,
    fn: () => T | Promise<T>,
    options: ToolOptions<C> = {},
  ): Promise<T | C | undefined> {
    return runTool(
      {
        time: this.time,
        clock: this.clock,
        log: this.log,
        event: (type, detail) => this.post({ type: 'event', event: type, data: detail }),
        checkpoint: (moment) => this.checkpointAt(moment),
      },
      kind,
      fn,
      options,
    );
  }
}
