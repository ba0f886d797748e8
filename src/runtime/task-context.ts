/**
 * What a task sees while it runs: memoized steps, checkpoints, partial findings, progress, its
 * AbortSignal and logger. Every write is fenced by the attempt's lease token; once the attempt is
 * over (finished, timed out past its grace, lease lost) the context refuses further writes, so a
 * task that ignored its signal cannot change anything after its deadline.
 */
import type { Logger } from 'pino';
import { BatonError, newEvent } from '../core/index.ts';
import type { Fence, Store } from '../store/index.ts';
import type { Clock } from '../time/index.ts';

export interface CheckpointView<S = unknown> {
  state: S;
  seq: number;
  itemsAnalyzed: number | null;
  savedAt: number;
}

export interface DependencyOutput {
  output: unknown;
  /** True when the upstream step ended partial (e.g. continued with partial results). */
  incomplete: boolean;
}

export interface CheckpointInfo {
  /** Items processed so far (papers, repositories, discussions…). */
  itemsAnalyzed?: number;
  /** Items expected in all, when known; gives the checkpoint's progress_percentage. */
  itemsTotal?: number;
  status?: 'in_progress' | 'completed';
}

export interface TaskContext {
  readonly runId: string;
  readonly rootId: string;
  readonly stepId: string | null;
  readonly taskName: string;
  /** 1 for the first attempt; counts every claim, including those after a crash. */
  readonly attempt: number;
  /** Fires on timeout, budget exhaustion, cancellation, lease loss or shutdown. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly clock: Clock;
  /** The last valid checkpoint when this attempt resumes a run, else undefined. */
  readonly lastCheckpoint: CheckpointView | undefined;
  /** Outputs of the flow steps this step depends on, by step id. */
  readonly dependencies: Readonly<Record<string, DependencyOutput>>;
  /** Runs `fn` once per run: once its result is recorded, later attempts get the record instead. */
  step<T>(key: string, fn: () => T | Promise<T>): Promise<T>;
  /** Saves the task's state atomically; resumes start from the last one. Returns its sequence number. */
  checkpoint(state: unknown, info?: CheckpointInfo): Promise<number>;
  /** Records findings as they come; a timeout returns them as the partial result. */
  partial(...findings: unknown[]): Promise<void>;
  /** Reports progress for the live view (persisted at most every 200 ms). */
  progress(done: number, total?: number): void;
  /** Sleeps on the injected clock; rejects when the attempt's signal fires. */
  sleep(ms: number): Promise<void>;
}

export interface AttemptContextInit {
  store: Store;
  clock: Clock;
  log: Logger;
  fence: Fence;
  runId: string;
  rootId: string;
  stepId: string | null;
  taskName: string;
  attempt: number;
  version: number;
  signal: AbortSignal;
  memo: Map<string, unknown>;
  lastCheckpoint: CheckpointView | undefined;
  dependencies: Record<string, DependencyOutput>;
  buildCheckpointRecord: (seqHint: number, info: CheckpointInfo) => Record<string, unknown>;
}

const PROGRESS_EVERY_MS = 200;

export class AttemptContext implements TaskContext {
  readonly runId: string;
  readonly rootId: string;
  readonly stepId: string | null;
  readonly taskName: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly clock: Clock;
  readonly lastCheckpoint: CheckpointView | undefined;
  readonly dependencies: Readonly<Record<string, DependencyOutput>>;
  /** Findings recorded by this attempt, in order. */
  readonly findings: unknown[] = [];
  readonly replayed: string[] = [];
  checkpoints = 0;
  lastState: unknown;
  private closedReason: string | undefined;
  private readonly used = new Set<string>();
  private lastProgressAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly init: AttemptContextInit) {
    this.runId = init.runId;
    this.rootId = init.rootId;
    this.stepId = init.stepId;
    this.taskName = init.taskName;
    this.attempt = init.attempt;
    this.signal = init.signal;
    this.log = init.log;
    this.clock = init.clock;
    this.lastCheckpoint = init.lastCheckpoint;
    this.dependencies = init.dependencies;
    this.lastState = init.lastCheckpoint?.state;
  }

  /** Ends the attempt: every later write throws. */
  close(reason: string): void {
    this.closedReason ??= reason;
  }

  private ensureOpen(what: string): void {
    if (this.closedReason !== undefined)
      throw new BatonError('LEASE_LOST', `${what} after the attempt ended (${this.closedReason})`, {
        data: { runId: this.runId, attempt: this.attempt },
      });
  }

  async step<T>(key: string, fn: () => T | Promise<T>): Promise<T> {
    if (typeof key !== 'string' || key.length === 0 || key.length > 512)
      throw new BatonError(
        'INVALID_INPUT',
        `ctx.step key must be a string of 1-512 characters, got ${String(key)}`,
      );
    if (this.used.has(key))
      throw new BatonError(
        'INVALID_INPUT',
        `ctx.step key "${key}" is used twice in one attempt; keys must be unique`,
        {
          data: { key },
        },
      );
    this.used.add(key);
    if (this.init.memo.has(key)) {
      this.replayed.push(key);
      return this.init.memo.get(key) as T;
    }
    this.ensureOpen(`ctx.step("${key}")`);
    const started = this.clock.monotonic();
    const value = await fn();
    this.ensureOpen(`ctx.step("${key}") finished`);
    // Hand back exactly what a replay would see (JSON), so first runs and resumes behave alike.
    const text = JSON.stringify(value === undefined ? null : value);
    const stored = value === undefined ? undefined : (JSON.parse(text) as T);
    await this.init.store.recordStep(
      this.init.fence,
      { key, attempt: this.attempt, output: stored, version: this.init.version },
      [
        newEvent(this.runId, 'step:completed', {
          key,
          durationMs: Math.round(this.clock.monotonic() - started),
        }),
      ],
    );
    this.init.memo.set(key, stored);
    return stored as T;
  }

  async checkpoint(state: unknown, info: CheckpointInfo = {}): Promise<number> {
    this.ensureOpen('ctx.checkpoint');
    const record = this.init.buildCheckpointRecord(this.checkpoints + 1, info);
    const seq = await this.init.store.saveCheckpoint(
      this.init.fence,
      { attempt: this.attempt, state, record, version: this.init.version },
      [
        newEvent(this.runId, 'checkpoint:saved', {
          seq: 0,
          itemsAnalyzed: info.itemsAnalyzed ?? null,
          progressPercentage: (record.progress_percentage as number | null | undefined) ?? null,
        }),
      ],
    );
    this.checkpoints++;
    this.lastState = state;
    return seq;
  }

  async partial(...findings: unknown[]): Promise<void> {
    this.ensureOpen('ctx.partial');
    if (findings.length === 0) return;
    const total = this.findings.length + findings.length;
    await this.init.store.addPartial(this.init.fence, this.attempt, findings, [
      newEvent(this.runId, 'partial:recorded', { count: findings.length, total }),
    ]);
    this.findings.push(...findings);
  }

  progress(done: number, total?: number): void {
    if (this.closedReason !== undefined || !Number.isFinite(done)) return;
    const now = this.clock.monotonic();
    const finished = total !== undefined && done >= total;
    if (!finished && now - this.lastProgressAt < PROGRESS_EVERY_MS) return;
    this.lastProgressAt = now;
    this.init.store
      .appendEvents(
        [newEvent(this.runId, 'progress:reported', { done, total: total ?? null })],
        this.init.fence,
      )
      .catch(() => {
        // Progress is advisory; a lost lease is reported by the attempt itself.
      });
  }

  sleep(ms: number): Promise<void> {
    return this.clock.sleep(ms, this.signal);
  }
}
