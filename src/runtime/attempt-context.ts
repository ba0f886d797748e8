/**
 * The in-process TaskContext of one attempt. Every write is fenced by the attempt's lease token;
 * once the attempt is over (finished, timed out past its grace, lease lost) the context refuses
 * further writes, so a task that ignored its signal cannot change anything after its deadline.
 */
import type { Logger } from 'pino';
import {
  assertJsonValue,
  BatonError,
  type BatonEventMap,
  type BatonEventType,
  buildCheckpointRecord,
  checkpointId,
  type DegradationDecision,
  type NewEvent,
  newEvent,
  ValidationError,
} from '../core/index.ts';
import type { Fence, RunRecord, Store } from '../store/index.ts';
import { type Clock, type Duration, parseDuration } from '../time/index.ts';
import { approvalAnswer, checkApproval } from './approval.ts';
import { AttemptSteps } from './attempt-steps.ts';
import type { TaskDefinition } from './define-task.ts';
import {
  awaitSignal,
  invokeChild,
  SIGNAL_NAME,
  SIGNAL_NAME_EXPECTED,
  type SignalStep,
  sleepAt,
} from './durable-calls.ts';
import { DurableWaits } from './durable-waits.ts';
import type { InvokeOptions, InvokeOutcome } from './invoke-child.ts';
import { runTool } from './run-tool.ts';
import type {
  ApprovalAnswer,
  ApprovalQuestion,
  CheckpointInfo,
  CheckpointView,
  DependencyOutput,
  DurableOptions,
  TaskContext,
  ToolOptions,
  WaitForOptions,
  WaitForResult,
} from './task-context.ts';
import { TimeKeeper, type TimeKeeperInit } from './time-keeper.ts';

export interface AttemptContextInit {
  readonly store: Store;
  readonly clock: Clock;
  /** The attempt's logger, built on first use: most attempts never log, and a child logger costs. */
  log(): Logger;
  readonly fence: Fence;
  readonly runId: string;
  readonly rootId: string;
  readonly stepId: string | null;
  readonly taskName: string;
  readonly attempt: number;
  readonly timeoutMs: number;
  /** The run's deadline (its budget's end), if it has one: a durable sleep may not outlast it. */
  readonly deadlineAt: number | null;
  readonly version: number;
  /** The attempt's abort; its signal is made when first read (see lazy-abort.ts). */
  readonly abort: { readonly signal: AbortSignal };
  /** Recorded steps by key; absent when there are none (a first attempt), made on the first record. */
  readonly memo: Map<string, unknown> | undefined;
  readonly lastCheckpoint: CheckpointView | undefined;
  /** Sequence number of the newest stored checkpoint (valid or not), for checkpoint ids. */
  readonly lastSeq: number;
  readonly dependencies: Record<string, DependencyOutput>;
  readonly mode: string | undefined;
  readonly fast: boolean;
  readonly time: TimeKeeperInit;
  /** Starts the child run of a ctx.invoke (unless it exists: the id is derived from the call). */
  startChild(task: TaskDefinition, input: unknown, options: InvokeOptions, id: string): Promise<void>;
  /** Resolves a data reference for ctx.fetch. */
  fetchRef(reference: unknown, signal: AbortSignal): Promise<unknown>;
}

const PROGRESS_EVERY_MS = 200;

export type Moment = 'explicit' | 'before_tool' | 'before_deep_analysis' | 'after_long_tool';

export class AttemptContext implements TaskContext {
  /** Made on first use: most attempts (a plain task's) never ask, and each costs a checkpoint policy. */
  private time_: TimeKeeper | undefined;
  /** Findings recorded by this attempt, in order. */
  readonly findings: unknown[] = [];
  readonly replayed: string[] = [];
  /** The body's durable waits; the attempt suspends when it can go no further without them. */
  readonly waits = new DurableWaits();
  checkpoints = 0;
  lastState: unknown;
  private closedReason: string | undefined;
  /** The memoized steps; made on the first step. */
  private steps_: AttemptSteps | undefined;
  private lastProgressAt = Number.NEGATIVE_INFINITY;
  private itemsTotal: number | undefined;
  private log_: Logger | undefined;

  // The attempt's facts are read through `init`, not copied onto the context: each copy is a field
  // more that a thousand waiting attempts hold (see attempt-init.ts).
  constructor(private readonly init: AttemptContextInit) {
    this.lastState = init.lastCheckpoint?.state;
  }

  get runId(): string {
    return this.init.runId;
  }
  get rootId(): string {
    return this.init.rootId;
  }
  get stepId(): string | null {
    return this.init.stepId;
  }
  get taskName(): string {
    return this.init.taskName;
  }
  get attempt(): number {
    return this.init.attempt;
  }
  get timeoutMs(): number {
    return this.init.timeoutMs;
  }
  get clock(): Clock {
    return this.init.clock;
  }
  get lastCheckpoint(): CheckpointView | undefined {
    return this.init.lastCheckpoint;
  }
  get dependencies(): Readonly<Record<string, DependencyOutput>> {
    return this.init.dependencies;
  }
  get mode(): string | undefined {
    return this.init.mode;
  }
  get fast(): boolean {
    return this.init.fast;
  }
  get deadlineAt(): number | null {
    return this.init.deadlineAt;
  }

  private get steps(): AttemptSteps {
    this.steps_ ??= new AttemptSteps(this.init, this.replayed, (what) => this.ensureOpen(what));
    return this.steps_;
  }

  get signal(): AbortSignal {
    return this.init.abort.signal;
  }

  get log(): Logger {
    this.log_ ??= this.init.log();
    return this.log_;
  }

  get time(): TimeKeeper {
    this.time_ ??= new TimeKeeper(this.init.time, this.init.clock, (change, a) =>
      this.emit_([
        newEvent(this.runId, 'time:mode_changed', {
          from: change.from,
          to: change.to,
          timeStatus: a.time_status,
          remainingSeconds: a.remaining_seconds,
        }),
      ]),
    );
    return this.time_;
  }

  /** Ends the attempt: every later write throws. */
  close(reason: string): void {
    this.closedReason ??= reason;
  }

  /** Throws LEASE_LOST once the attempt is over. */
  getRun(id: string): Promise<RunRecord | undefined> {
    return this.init.store.getRun(id);
  }

  ensureOpen(what: string): void {
    if (this.closedReason !== undefined)
      throw new BatonError('LEASE_LOST', `${what} after the attempt ended (${this.closedReason})`, {
        data: { runId: this.runId, attempt: this.attempt },
      });
  }

  /** Advisory events (progress, mode changes, skipped tools): written in the background. */
  private emit_(events: NewEvent[]): void {
    if (this.closedReason !== undefined) return;
    this.init.store.appendEvents(events, this.init.fence).catch(() => {
      // A lost lease is reported by the attempt itself.
    });
  }

  async step<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    const found = this.stepLookup(key);
    if (found.hit) return found.value as T;
    // In flight: a durable wait made alongside does not end the attempt before this is recorded.
    return this.waits.track(async () => {
      const started = this.clock.monotonic();
      const value = await fn();
      return (await this.stepRecord(key, value, this.clock.monotonic() - started)) as T;
    });
  }

  /**
   * Starts a child run (memoized: the child's id is derived from this call's key) and awaits its
   * outcome; while the child is open the attempt suspends (`waiting: child`).
   */
  invoke<I, O, In = I>(
    task: TaskDefinition<I, O, In>,
    input: In,
    options: InvokeOptions = {},
  ): Promise<InvokeOutcome<O>> {
    const start = (id: string) => this.init.startChild(task as TaskDefinition, input, options, id);
    return invokeChild(this, task.name, options.key, start);
  }

  async waitFor<T = unknown>(name: string, options: WaitForOptions<T> = {}): Promise<WaitForResult<T>> {
    if (typeof name !== 'string' || !SIGNAL_NAME.test(name))
      throw new ValidationError('ctx.waitFor name', SIGNAL_NAME_EXPECTED, name, { code: 'INVALID_OPTION' });
    const timeoutMs =
      options.timeout === undefined ? null : parseDuration(options.timeout, 'ctx.waitFor timeout');
    const key = this.waits.nextKey('signal', options.key);
    return awaitSignal(this, name, key, timeoutMs, options.schema, `ctx.waitFor("${name}")`);
  }

  async requestApproval(question: ApprovalQuestion): Promise<ApprovalAnswer> {
    const q = checkApproval(question, this.taskName);
    const key = this.waits.nextKey('signal', `approval:${q.key}`);
    const wait = { request: q.request, onTimeout: q.onTimeout };
    const what = `ctx.requestApproval("${q.key}")`;
    const r = await awaitSignal(this, q.signal, key, q.timeoutMs, undefined, what, wait);
    return approvalAnswer(r, q.onTimeout);
  }

  /** Reads the oldest unread signal `name` as the memoized step `key` (fenced), if one is there. */
  readSignal(name: string, key: string): Promise<SignalStep | undefined> {
    return this.steps.readSignal(name, key);
  }

  sleep(duration: Duration, options: DurableOptions = {}): Promise<void> {
    const ms = parseDuration(duration, 'ctx.sleep duration');
    return sleepAt(this, this.clock.now() + ms, options.key, 'ctx.sleep');
  }

  sleepUntil(at: Date | number, options: DurableOptions = {}): Promise<void> {
    const ms = at instanceof Date ? at.getTime() : at;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms))
      throw new ValidationError('ctx.sleepUntil time', 'a valid Date or epoch milliseconds', at, {
        code: 'INVALID_OPTION',
      });
    return sleepAt(this, ms, options.key, 'ctx.sleepUntil');
  }

  /**
   * First half of a step (also used by the thread bridge): checks the key and returns the recorded
   * result when there is one.
   */
  stepLookup(key: string): { hit: boolean; value?: unknown } {
    return this.steps.lookup(key);
  }

  /** Second half of a step: records the result (fenced) and returns it as a replay would see it. */
  stepRecord(key: string, value: unknown, durationMs: number): Promise<unknown> {
    return this.steps.record(key, value, durationMs);
  }

  /** Appends an advisory event (used by the thread bridge for tool and time events). */
  emitEvent<T extends BatonEventType>(type: T, data: BatonEventMap[T]): void {
    this.emit_([newEvent(this.runId, type, data)]);
  }

  /** Saves a checkpoint taken at a protocol moment (used by ctx.tool and the thread bridge). */
  checkpointAt(state: unknown, info: CheckpointInfo, moment: Moment): Promise<number> {
    return this.saveCheckpoint(state, info, moment);
  }

  checkpoint(state: unknown, info: CheckpointInfo = {}): Promise<number> {
    return this.saveCheckpoint(state, info, 'explicit');
  }

  private async saveCheckpoint(state: unknown, info: CheckpointInfo, moment: Moment): Promise<number> {
    this.ensureOpen('ctx.checkpoint');
    // Refused here, with nothing stored, rather than kept in a form the next attempt cannot read
    // back as written (a cycle or a BigInt would throw inside the store; NaN would become null).
    assertJsonValue(state ?? null, 'checkpoint state', 'CHECKPOINT_INVALID');
    if (info.itemsAnalyzed !== undefined) this.time.noteItems(info.itemsAnalyzed);
    this.noteTotal(info.itemsTotal);
    const items = this.time.itemsAnalyzed;
    const assessment = this.time.assess();
    const record = buildCheckpointRecord({
      checkpointId: checkpointId(this.stepId ?? this.taskName, this.init.lastSeq + this.checkpoints + 1),
      itemsAnalyzed: items,
      // The last total the task reported, so automatic checkpoints (ctx.tool's) carry progress too.
      ...(this.itemsTotal !== undefined ? { itemsTotal: this.itemsTotal } : {}),
      assessment,
      status: info.status ?? 'in_progress',
    });
    const seq = await this.init.store.saveCheckpoint(
      this.init.fence,
      {
        attempt: this.attempt,
        state: state ?? null,
        record: record as unknown as Record<string, unknown>,
        version: this.init.version,
      },
      [
        newEvent(this.runId, 'checkpoint:saved', {
          seq: 0,
          itemsAnalyzed: items,
          progressPercentage: record.progress_percentage,
          timeStatus: assessment.time_status,
          remainingSeconds: assessment.remaining_seconds,
          moment,
        }),
      ],
    );
    this.checkpoints++;
    this.lastState = state;
    this.time.noteCheckpoint(items);
    return seq;
  }

  async partial(...findings: unknown[]): Promise<void> {
    this.ensureOpen('ctx.partial');
    if (findings.length === 0) return;
    for (const [i, f] of findings.entries())
      assertJsonValue(f, `ctx.partial finding ${i + 1}`, 'NON_RETRIABLE');
    const total = this.findings.length + findings.length;
    await this.init.store.addPartial(this.init.fence, this.attempt, findings, [
      newEvent(this.runId, 'partial:recorded', { count: findings.length, total }),
    ]);
    this.findings.push(...findings);
  }

  /** Remembers a total of items the task reported (checkpoint info or progress). */
  private noteTotal(total: number | undefined): void {
    if (total !== undefined && Number.isFinite(total) && total > 0) this.itemsTotal = total;
  }

  progress(done: number, total?: number): void {
    if (this.closedReason !== undefined || !Number.isFinite(done)) return;
    this.time.noteItems(done);
    this.noteTotal(total);
    const now = this.clock.monotonic();
    const finished = total !== undefined && done >= total;
    if (!finished && now - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastProgressAt = now;
    this.emit_([newEvent(this.runId, 'progress:reported', { done, total: total ?? null })]);
  }

  delay(ms: number): Promise<void> {
    return this.clock.sleep(ms, this.signal);
  }

  shouldSkip(kind: string): DegradationDecision {
    return this.time.shouldSkip(kind);
  }

  emit(kind: string, data: Record<string, unknown> = {}): void {
    this.emit_([newEvent(this.runId, 'task:event', { kind, data })]);
  }

  fetch(reference: unknown): Promise<unknown> {
    this.ensureOpen('ctx.fetch');
    return this.init.fetchRef(reference, this.signal);
  }

  shouldCheckpoint(itemsAnalyzed: number): boolean {
    return this.time.shouldCheckpoint(itemsAnalyzed);
  }

  tool<T, C = T>(
    kind: string,
    fn: () => T | Promise<T>,
    options: ToolOptions<C> = {},
  ): Promise<T | C | undefined> {
    this.ensureOpen(`ctx.tool("${kind}")`);
    return runTool(
      {
        time: this.time,
        clock: this.clock,
        log: this.log,
        event: (type, detail) => this.emit_([newEvent(this.runId, type, detail as never)]),
        checkpoint: (moment) => this.saveCheckpoint(this.lastState, {}, moment),
      },
      kind,
      fn,
      options,
    );
  }
}
