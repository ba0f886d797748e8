/**
 * What a task sees while it runs: memoized steps, checkpoints, partial findings, progress, its
 * AbortSignal and logger. Every write is fenced by the attempt's lease token; once the attempt is
 * over (finished, timed out past its grace, lease lost) the context refuses further writes, so a
 * task that ignored its signal cannot change anything after its deadline.
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { Answerer, DegradationDecision } from '../core/index.ts';
import type { Clock, Duration } from '../time/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { InvokeOptions, InvokeOutcome } from './invoke-child.ts';
import type { TaskTime } from './time-keeper.ts';

/** The last checkpoint as the task sees it on resume: its state (typed by the task's checkpointSchema) and progress. */
export interface CheckpointView<S = unknown> {
  state: S;
  seq: number;
  itemsAnalyzed: number | null;
  savedAt: number;
}

/** An upstream flow step's output as a dependent step sees it. */
export interface DependencyOutput {
  output: unknown;
  /** True when the upstream step ended partial (e.g. continued with partial results). */
  incomplete: boolean;
}

/** Progress a checkpoint records beside its state (items analyzed of the total). */
export interface CheckpointInfo {
  /** Items processed so far (papers, repositories, discussions…). */
  itemsAnalyzed?: number;
  /** Items expected in all, when known; gives the checkpoint's progress_percentage. */
  itemsTotal?: number;
  status?: 'in_progress' | 'completed';
}

export interface ToolOptions<C> {
  /** The cheap alternative (abstract only, quick summary, cached data) run when time is short. */
  cheap?: (decision: DegradationDecision) => C | Promise<C>;
  /** A name for events and logs. @default the kind */
  name?: string;
}

/** Options shared by the durable calls (ctx.sleep, ctx.invoke, ctx.waitFor). */
export interface DurableOptions {
  /**
   * Names the wait instead of numbering it by call order (`baton:sleep:1`, …). Needed only when a
   * body makes this call on some replays and not on others.
   */
  key?: string;
}

/** Options of ctx.waitFor: a timeout and a zod schema for the payload. */
export interface WaitForOptions<T> extends DurableOptions {
  /** How long to wait (from the first call); without it the wait has no end. */
  timeout?: Duration;
  /** Checks the payload; a payload that fails it fails the run with INVALID_INPUT naming the field. */
  schema?: ZodType<T>;
}

/** What ctx.waitFor resolves to: the payload received, or a timeout. */
export type WaitForResult<T> =
  | { status: 'received'; payload: T; signalId: string; sentAt: number }
  | { status: 'timeout'; timedOutAt: number };

/** A question for a person: may this (tool call, say) go ahead? See `ctx.requestApproval`. */
export interface ApprovalQuestion {
  /** Names the question within the run (a tool call id): the same key on a replay is the same question. */
  key: string;
  /** What the person reads, e.g. "Approve deleteFile({"path":"/tmp/x"})?". */
  message: string;
  /** How long to wait for an answer (from the first call); without it, until someone answers. */
  timeout?: Duration;
  /** The answer when `timeout` passes. @default 'deny' */
  onTimeout?: 'approve' | 'deny';
}

export interface ApprovalAnswer {
  approved: boolean;
  /** Who answered (`cli`, `mcp`, the HTTP actor, …), or `policy (decision timeout)`. */
  by: string;
  /** The same as a typed value: a person (by name) or the policy past the decision timeout. */
  answeredBy: Answerer;
  /** The answerer's reason, if they gave one. */
  reason?: string;
  /** When it was answered (epoch ms). */
  at: number;
  timedOut: boolean;
}

/** `S`: the checkpoint state's type — the task's `checkpointSchema` gives it. */
export interface TaskContext<S = unknown> {
  readonly runId: string;
  readonly rootId: string;
  readonly stepId: string | null;
  readonly taskName: string;
  /** 1 for the first attempt; counts every claim, including those after a crash. */
  readonly attempt: number;
  /** This attempt's timeout: the signal fires this long after the attempt started. */
  readonly timeoutMs: number;
  /** Fires on timeout, budget exhaustion, cancellation, lease loss or shutdown. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly clock: Clock;
  /** The last valid checkpoint when this attempt resumes a run, else undefined. */
  readonly lastCheckpoint: CheckpointView<S> | undefined;
  /** Outputs of the flow steps this step depends on, by step id. */
  readonly dependencies: Readonly<Record<string, DependencyOutput>>;
  /** Runs `fn` once per run: once its result is recorded, later attempts get the record instead. */
  step<T>(key: string, fn: () => T | Promise<T>): Promise<T>;
  /** Saves the task's state atomically; resumes start from the last one. Returns its sequence number. */
  checkpoint(state: S, info?: CheckpointInfo): Promise<number>;
  /** Records findings as they come; a timeout returns them as the partial result. */
  partial(...findings: unknown[]): Promise<void>;
  /** Reports progress for the live view (persisted at most every 200 ms). */
  progress(done: number, total?: number): void;
  /**
   * Starts `task` as a child run and awaits how it ended (`{ status, output | error }`). Durable and
   * memoized: a replay never starts a second child, and while the child runs this run waits
   * (`waiting: child`) without holding a slot. Cancelling this run cancels its open children.
   * `budgetShare` gives the child a share of this run's remaining budget.
   */
  invoke<I, O, In = I>(
    task: TaskDefinition<I, O, In>,
    input: In,
    options?: InvokeOptions,
  ): Promise<InvokeOutcome<O>>;
  /**
   * Waits durably for the signal `name` (`baton.signal(runId, name, payload)`, `baton signal`,
   * `POST /runs/:id/signals/:name`): `{ status: 'received', payload }`, checked against `schema`, or
   * `{ status: 'timeout' }` once `timeout` (fixed at the first call) has passed. Each signal is read
   * once; signals sent before the wait are kept until read. The run waits as `waiting: signal`.
   */
  waitFor<T = unknown>(name: string, options?: WaitForOptions<T>): Promise<WaitForResult<T>>;
  /**
   * Asks a person to approve or deny, durably: the run waits as `waiting: decision` with an
   * approve / deny question (`menu: "approval"`) that every way of answering a decision answers —
   * `baton.decide(runId, "approve" | { choice, reason })`, `baton decide`, the HTTP API, MCP, the
   * dashboard. No process or slot is held while it waits; a crash or restart loses nothing. Past
   * `timeout` the answer is `onTimeout` (deny unless said). Memoized by `key`: a replay gets the
   * recorded answer. Refused in `isolation: 'thread'`.
   */
  requestApproval(question: ApprovalQuestion): Promise<ApprovalAnswer>;
  /**
   * Sleeps durably: the run waits on a timer row (`waiting: timer`, no process, no concurrency
   * slot) and the body is replayed when it wakes — memoized steps return their records, and this
   * call returns. Survives crashes and restarts. The wake time is fixed at the first call.
   * Refused (INVALID_OPTION) when it would wake after the run's time budget ends.
   */
  sleep(duration: Duration, options?: DurableOptions): Promise<void>;
  /** Sleeps durably until a moment (a Date or epoch milliseconds); see `sleep`. */
  sleepUntil(at: Date | number, options?: DurableOptions): Promise<void>;
  /**
   * Waits inside the attempt on the injected clock, holding its slot; rejects when the attempt's
   * signal fires (timeout, cancellation). For pacing work, not for waiting durably.
   */
  delay(ms: number): Promise<void>;
  /** The run's time budget: `ctx.time.assess()` gives the protocol's time assessment. */
  readonly time: TaskTime;
  /** The research mode in effect (codebase, docs, external, dual, …), if any. */
  readonly mode: string | undefined;
  /** True in fast mode (timeouts halved, one retry). */
  readonly fast: boolean;
  /** The degradation decision for a tool kind now: `{ skip, reason, alternative, level, action }`. */
  shouldSkip(kind: string): DegradationDecision;
  /**
   * Runs a tool under the degradation table: normally, as its cheap alternative, or not at all
   * (undefined), recording what was skipped and why. Checkpoints before the call (and before a deep
   * analysis) and after a call that took long, as the time-checkpoint protocol asks.
   */
  tool<T, C = T>(
    kind: string,
    fn: () => T | Promise<T>,
    options?: ToolOptions<C>,
  ): Promise<T | C | undefined>;
  /** True when `itemsAnalyzed` reached the task's next checkpoint interval (e.g. every 3 papers). */
  shouldCheckpoint(itemsAnalyzed: number): boolean;
  /**
   * Resolves a data reference now (a `data_reference` object or its inside), under this task's
   * permissions — e.g. the part of a reference transfer the task decided it needs.
   */
  fetch(reference: unknown): Promise<unknown>;
  /** Records an event of the task's own in the run's log (`task:event`), written in the background. */
  emit(kind: string, data?: Record<string, unknown>): void;
}
