/**
 * `createBaton` returns a handle on one runtime: its store, clock, logger, tasks and (by default)
 * an in-process worker. Two handles can live in one process (tests do this); nothing is global.
 */
import type { Logger } from 'pino';
import {
  BatonError,
  type BatonEvent,
  deserializeError,
  isTerminal,
  type RunStatus,
  serializeError,
  type TimeoutResult,
} from '../core/index.ts';
import { parseWebhookTarget } from '../delivery/index.ts';
import { onFirstUse } from '../deps/index.ts';
import { DEFAULT_TTL_MS, type RunQuery, type RunRecord, type Store, storeAt } from '../store/index.ts';
import { type Clock, parseDuration, systemClock } from '../time/index.ts';
import { type BatonOptions, refsFor, refuseUnknownBatonKeys } from './baton-options.ts';
import { decide, decideOnTimeout, type OpenDecision, openDecisions } from './decisions.ts';
import { type FlowDefinition, isFlowDefinition } from './define-flow.ts';
import { isTaskDefinition, type TaskDefinition } from './define-task.ts';
import { checkCallbackName, DEFAULT_CALLBACK_NAME, servedRoutes } from './delivery-routes.ts';
import { type DeliveryHandlers, dispatchDeliveries, onDeliveryDue } from './delivery-service.ts';
import { type Engine, TaskRegistry } from './engine.ts';
import { lazySilentLogger } from './lazy-logger.ts';
import { type ResumeOptions, type ResumeResult, resumeRun } from './resume-run.ts';
import { type SentSignal, sendSignal } from './send-signal.ts';
import { type StartOptions, startFlow, startTask } from './start-run.ts';
import { createStepInputs } from './step-inputs.ts';
import { WAKE_TIMER, wakeIfReady } from './wake-run.ts';
import {
  type FollowOptions,
  followAllEvents,
  followEvents,
  requireRun,
  TerminalWatcher,
} from './watch-run.ts';
import { Worker } from './worker.ts';

interface OutcomeOf {
  id: string;
  run: RunRecord;
}

/**
 * How a run ended, by status. Only a succeeded run's output has the task's type: a partial task run
 * holds the protocol's timeout result (`status: "timeout"`, `partial: true`, findings…), a flow's
 * partial output its steps' outputs; a failed, cancelled or expired run has an error.
 */
export type RunOutcome<O = unknown> =
  | (OutcomeOf & { status: 'succeeded'; output: O; error: undefined })
  | (OutcomeOf & {
      status: 'partial';
      output: TimeoutResult | Record<string, unknown>;
      error: Error | undefined;
    })
  | (OutcomeOf & {
      status: Exclude<RunStatus, 'succeeded' | 'partial'>;
      output: unknown;
      error: Error | undefined;
    });

/** A started run: its id, and ways to await its outcome or follow its events. */
export interface RunHandle<O = unknown> {
  readonly id: string;
  /** Resolves when the run ends (succeeded, partial, failed, cancelled or expired). */
  result(options?: { signal?: AbortSignal }): Promise<RunOutcome<O>>;
  events(options?: FollowOptions): AsyncGenerator<BatonEvent>;
  cancel(reason?: string): Promise<void>;
}

const loadPino = onFirstUse<typeof import('pino')>('pino');

/** pino at level $BATON_LOG_LEVEL; silent by default, and then built only when needed (lazy-logger.ts). */
function defaultLogger(): Logger {
  const level = process.env.BATON_LOG_LEVEL ?? 'silent';
  return level === 'silent' ? lazySilentLogger(() => loadPino().pino({ level })) : loadPino().pino({ level });
}

type Startable<I, O> = TaskDefinition<I, O> | FlowDefinition<I> | string;

/** A Baton instance: starts, follows, resumes, cancels and answers runs on one store, and runs a worker unless told not to. */
export class Baton implements AsyncDisposable {
  readonly store: Store;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly worker: Worker | undefined;
  private readonly engine: Engine;
  private readonly pollMs: number;
  private readonly ownsStore: boolean;
  private readonly watcher: TerminalWatcher;
  private started: Promise<void> | undefined;
  private closed = false;

  constructor(options: BatonOptions = {}) {
    refuseUnknownBatonKeys(options);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? defaultLogger();
    this.ownsStore = typeof options.store !== 'object';
    this.store =
      typeof options.store === 'object'
        ? options.store
        : storeAt(options.store ?? process.env.BATON_DATABASE_URL ?? './baton.db', { clock: this.clock });
    this.pollMs = options.pollMs ?? 250;
    const webhooks = Object.fromEntries(
      Object.entries(options.schedule?.webhooks ?? {}).map(([name, t]) => [
        name,
        parseWebhookTarget(t, `schedule.webhooks.${name}`),
      ]),
    );
    const callbackName =
      options.schedule?.onDelivery === undefined
        ? undefined
        : checkCallbackName(options.schedule.callbackName ?? DEFAULT_CALLBACK_NAME, 'schedule.callbackName');
    this.engine = {
      store: this.store,
      clock: this.clock,
      logger: this.logger,
      tasks: new TaskRegistry(),
      ttlMs: options.ttl === undefined ? DEFAULT_TTL_MS : parseDuration(options.ttl, 'ttl'),
      inputs: createStepInputs(this.store, this.clock, refsFor(options.refs, this.store), options.context),
      delivery: {
        channels: {
          ...(callbackName !== undefined ? { callback: callbackName } : {}),
          webhooks: Object.entries(webhooks).map(([name, t]) => ({ name, url: t.url })),
        },
        routes: servedRoutes(callbackName, webhooks),
        progress: options.schedule?.progress ?? {},
      },
      scheduling: {
        ...(options.schedule?.defaultTimezone !== undefined
          ? { defaultTimezone: options.schedule.defaultTimezone }
          : {}),
        ...(options.schedule?.horizon !== undefined
          ? { horizonMs: parseDuration(options.schedule.horizon, 'schedule.horizon') }
          : {}),
      },
      offer: (runIds) => this.worker?.offer(runIds),
    };
    for (const t of options.tasks ?? []) this.engine.tasks.register(t);
    this.watcher = new TerminalWatcher(this.engine, this.pollMs);
    this.worker =
      options.worker === false
        ? undefined
        : new Worker(this.engine, { pollMs: this.pollMs, ...options.worker });
    this.worker?.onTimer('decision-timeout', (t) =>
      decideOnTimeout(this.engine, String(t.payload.runId), Number(t.payload.attempt)),
    );
    this.worker?.onTimer('delivery-due', (t) => onDeliveryDue(this.engine, String(t.payload.runId)));
    this.worker?.onTimer(WAKE_TIMER, async (t) => {
      await wakeIfReady(this.engine, String(t.payload.runId));
    });
    const handlers: DeliveryHandlers = {
      ...(options.schedule?.onDelivery ? { callback: options.schedule.onDelivery } : {}),
      callbackTimeoutMs: parseDuration(
        options.schedule?.callbackTimeout ?? '30s',
        'schedule.callbackTimeout',
      ),
      webhooks,
    };
    this.worker?.onDue(() => dispatchDeliveries(this.engine, handlers));
    // The worker starts as soon as the store is opened with one, not at the first start or resume:
    // a restarted process that only waits for results still fires overdue timers and sends overdue
    // deliveries (issue 12 item 6). A failure to start surfaces from ready() and the calls that wait on it.
    if (this.worker)
      this.ready().catch((err: unknown) =>
        this.logger.error({ err: serializeError(err) }, 'the worker did not start'),
      );
  }

  /** The internals the HTTP API and CLI build on. */
  get internals(): Engine {
    return this.engine;
  }

  register(...tasks: TaskDefinition[]): this {
    for (const t of tasks) this.engine.tasks.register(t);
    return this;
  }

  /**
   * Resolves when the in-process worker has started. It starts by itself when the handle is created
   * (with `worker` not false); start and resume await this too.
   */
  ready(): Promise<void> {
    this.started ??= this.worker ? this.worker.start() : Promise.resolve();
    return this.started;
  }

  async start<I, O>(what: Startable<I, O>, input?: I, options: StartOptions = {}): Promise<RunHandle<O>> {
    let id: string;
    if (isFlowDefinition(what)) id = await startFlow(this.engine, what as FlowDefinition, input, options);
    else if (typeof what !== 'string' && !isTaskDefinition(what)) throw notStartable(what);
    else {
      const task =
        typeof what === 'string'
          ? this.engine.tasks.require(what)
          : (what as TaskDefinition<unknown, unknown>);
      if (typeof what !== 'string') this.engine.tasks.register(task);
      id = await startTask(this.engine, task, input, options);
    }
    await this.ready();
    return this.handle<O>(id);
  }

  /**
   * Resumes a run; see ResumeResult for what it did. `strict` (the HTTP API's resume): a run that
   * someone else already resumed — queued or running — is a RUN_CONFLICT naming the holder. A run
   * a person's answer ended (continue_partial, skip, abandon, manual_input) is left as it is
   * (`ended_by_answer`) unless `again` is set.
   */
  async resume<O = unknown>(
    id: string,
    by = 'api',
    options: ResumeOptions = {},
  ): Promise<RunHandle<O> & { resumed: ResumeResult }> {
    const resumed = await resumeRun(
      this.engine,
      id,
      by,
      (runId) => this.worker?.isRunning(runId) ?? false,
      options,
    );
    await this.ready();
    this.worker?.wake();
    return Object.assign(this.handle<O>(id), { resumed });
  }

  /**
   * Resolves when the run needs nothing more from this side: it ended, or it waits for a client to
   * resume it or for a decision — for a flow, also when one of its steps waits for a decision.
   * (The HTTP sync mode answers 200, 202 or 408 from this.)
   */
  settled(id: string, options: { signal?: AbortSignal } = {}): Promise<RunRecord> {
    return this.watcher.wait(
      id,
      options.signal,
      async (run) =>
        isSettled(run) || (run.kind === 'flow' && (await openDecisions(this.engine, run)).length > 0),
    );
  }

  /** The questions a run waits on: its own, or for a flow, its steps' (answer with `decide`). */
  async openDecisions(id: string): Promise<OpenDecision[]> {
    return openDecisions(this.engine, await requireRun(this.engine, id));
  }

  handle<O = unknown>(id: string): RunHandle<O> {
    return {
      id,
      result: (o) => this.result<O>(id, o),
      events: (o) => this.events(id, o),
      cancel: (reason) => this.cancel(id, reason),
    };
  }

  async result<O = unknown>(id: string, options: { signal?: AbortSignal } = {}): Promise<RunOutcome<O>> {
    const run = await this.watcher.wait(id, options.signal);
    const error = run.error ? deserializeError(run.error) : undefined;
    if (run.status === 'succeeded')
      return { id, status: 'succeeded', output: run.output as O, error: undefined, run };
    if (run.status === 'partial')
      return {
        id,
        status: 'partial',
        output: run.output as TimeoutResult | Record<string, unknown>,
        error,
        run,
      };
    return { id, status: run.status, output: run.output, error, run };
  }

  events(id: string, options: FollowOptions = {}): AsyncGenerator<BatonEvent> {
    return followEvents(this.engine, id, this.pollMs, options);
  }

  /** Every run's events in commit order, past (after `afterId`) then live, until the signal aborts. */
  allEvents(options: Omit<FollowOptions, 'forever'> = {}): AsyncGenerator<BatonEvent> {
    return followAllEvents(this.engine, this.pollMs, options);
  }

  /**
   * Answers the escalation a run is waiting on: a choice id ("retry_extended", "continue_partial",
   * "skip", "different_mode", "manual_input", "abandon") or `{ choice, mode?, input? }`.
   */
  async decide(id: string, answer: unknown, by = 'api'): Promise<RunRecord> {
    const run = await decide(this.engine, id, answer, by);
    this.worker?.wake();
    return run;
  }

  /** Cancels the run; its open descendants (a flow's steps, children of ctx.invoke) end with it. */
  async cancel(id: string, reason = 'cancelled by request'): Promise<void> {
    const run = await requireRun(this.engine, id);
    if (isTerminal(run.status)) return;
    const now = this.clock.now();
    await this.store.transition(
      id,
      {
        status: 'cancelled',
        finishedAt: now,
        expiresAt: now + this.engine.ttlMs,
        waitReason: null,
        wakeAt: null,
      },
      [{ runId: id, type: 'run:cancelled', data: { reason } }],
      { expectStatus: ['queued', 'running', 'waiting'] },
    );
  }

  /**
   * Sends a signal to a run that has not ended: kept until its `ctx.waitFor(name)` reads it (once);
   * a run waiting for it wakes. RUN_NOT_FOUND / RUN_CONFLICT (ended) otherwise.
   */
  signal(runId: string, name: string, payload?: unknown): Promise<SentSignal> {
    return sendSignal(this.engine, runId, name, payload);
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.store.getRun(id);
  }

  listRuns(query?: RunQuery): Promise<RunRecord[]> {
    return this.store.listRuns(query);
  }

  /** Stops the worker (handing its runs back) and closes the store if this handle opened it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.started) await this.started.catch(() => undefined);
    await this.worker?.stop();
    if (this.ownsStore) await this.store.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function isSettled(run: RunRecord): boolean {
  return (
    isTerminal(run.status) ||
    (run.status === 'waiting' && (run.waitReason === 'resume' || run.waitReason === 'decision'))
  );
}

/** What start() was given instead of a task, a flow or a task name: say what to do with a plan. */
function notStartable(what: unknown): BatonError {
  const isObject = typeof what === 'object' && what !== null;
  const looksLikePlan = isObject && ('plan' in what || 'steps' in what || 'task_chain' in what);
  return new BatonError(
    'INVALID_INPUT',
    looksLikePlan
      ? 'start() takes a task, a flow or a task name; a JSON plan ({ plan: { steps } }, { steps } or { task_chain }) must be read with loadPlan first: baton.start(loadPlan(plan))'
      : `start() takes a task (defineTask), a flow (defineFlow, or loadPlan for a JSON plan) or a registered task name, got ${isObject ? 'an object' : typeof what}`,
    { data: { field: 'what' } },
  );
}

/** Creates a Baton on a store (a SQLite path, a Postgres URL or a Store); starts a worker unless `worker: false`. */
export function createBaton(options: BatonOptions = {}): Baton {
  return new Baton(options);
}
