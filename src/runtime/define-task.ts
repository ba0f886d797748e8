/**
 * Tasks: named async functions with a validated input, timeouts per attempt and per research mode,
 * a retry policy, a checkpoint interval, a time budget, an escalation policy and a kind. Options are
 * validated once, here, with messages that name the field; the engine only sees the resolved form.
 */
import type { z } from 'zod';
import {
  BatonError,
  compileRetryPolicy,
  type DegradationTable,
  defineEscalationPolicy,
  type EscalationPolicy,
  type EscalationWording,
  fieldPath,
  lookupMode,
  optionKeys,
  type RetryOptions,
  type RetryPolicy,
  refuseUnknownKeys,
  resolveTimeouts,
  type TimeThresholds,
  ValidationError,
} from '../core/index.ts';
import { checkRunsPermission, type RefPermissions } from '../refs/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import {
  degradationOf,
  type ResearchOptions,
  type ResolvedResearch,
  resolveResearch,
} from './research-options.ts';
import type { StepContextOptions } from './step-inputs.ts';
import type { TaskContext } from './task-context.ts';
import { toModuleUrl } from './thread/index.ts';

/** How a task retries: the timeout multipliers per attempt, the backoff, the number of retries, whether a partial result is accepted. */
export interface TaskRetryOptions {
  /** Timeout of retry n is the base timeout × timeoutMultipliers[n-1]. @default [2, 3] */
  timeoutMultipliers?: number[];
  /** Wait before retry n (a durable timer). @default ["5s", "15s"]; fast mode ["2s", "5s"] */
  backoff?: Duration[];
  /** Retries before escalating. @default 2; fast mode 1 */
  maxRetries?: number;
  /** Escalate at once instead of retrying when an attempt left partial findings. @default false; fast mode true */
  acceptPartial?: boolean;
}

export interface EscalationOptions {
  /** Ask a human (CLI prompt, `baton decide`, HTTP) instead of answering by policy. @default false */
  ask?: boolean;
  /** The unattended policy, also used when a human does not answer in time. */
  policy?: Partial<EscalationPolicy>;
  /** How long a question waits for a human before the policy answers. @default forever */
  decisionTimeout?: Duration;
  /** What a complete run usually finds, for the message ("normally expect 8-12"). */
  expectedFindings?: { min: number; max: number };
  wording?: Partial<EscalationWording>;
}

export interface RetryInfo {
  input: unknown;
  /** The attempt that just failed (from 1). */
  attempt: number;
  error: Error;
  findings: unknown[];
  mode: string | undefined;
}

/** Options of defineTask. */
export interface TaskOptions<I, O, S = unknown, In = I> {
  name: string;
  /** zod schema of the input; the run is refused (nothing stored) when the input fails it. */
  input?: z.ZodType<I, In>;
  run: (input: I, ctx: TaskContext<S>) => Promise<O> | O;
  /** Timeout of the first attempt. @default the research mode's timeout, else 2880 s */
  timeout?: Duration;
  /** Time the task gets after its signal fires to return what it has. @default "1s" */
  grace?: Duration;
  /** false: no retries (escalate after the first failure). */
  retry?: TaskRetryOptions | false;
  /** Checkpoint every N items (ctx.shouldCheckpoint). @default 1, or the research agent's interval */
  checkpointEvery?: number;
  /** A free label shown in listings (e.g. "researcher"). */
  kind?: string;
  /** Bumped when the checkpoint or step shapes change; older checkpoints are then ignored. @default 1 */
  version?: number;
  /** Time budget of one run (across attempts and restarts). */
  budget?: Duration;
  /** At most this many runs of this task at once, across all workers. */
  concurrency?: number;
  /** How long a finished run is kept. @default "24h" */
  ttl?: Duration;
  /** Validates a checkpoint's state before it is handed back on resume; types `ctx.lastCheckpoint.state`. */
  checkpointSchema?: z.ZodType<S>;
  /** Time-status thresholds behind ctx.timeStatus, ctx.shouldSkip and ctx.tool. */
  time?: { thresholds?: Partial<TimeThresholds> };
  /**
   * The protocols' research preset: research modes, the per-agent timeout, the agents' checkpoint
   * intervals and the degradation table (see ResearchOptions). Absent: the general defaults.
   */
  research?: ResearchOptions;
  escalation?: EscalationOptions;
  /** Called before a retry; return a new input (narrower scope, other keywords) or nothing. */
  onRetry?: (info: RetryInfo) => unknown | Promise<unknown>;
  /**
   * What a timeout does: "retry" (the retry policy, then escalation) or "park" — the run waits in
   * `waiting: resume` from its last checkpoint until its client resumes it (protocol 003's resumable
   * timeout). @default "retry"
   */
  onTimeout?: 'retry' | 'park';
  /** "thread": run in a worker thread terminated at the hard deadline (needs `module`). @default "inline" */
  isolation?: 'inline' | 'thread';
  /** The module that exports this task (`import.meta.url`), for thread isolation. */
  module?: string;
  /**
   * Which workspace folders and declared tables this task's data references may read (default
   * all), and whose runs: its own flow's only, unless `runs: "any"` is granted.
   */
  permissions?: RefPermissions;
  /** How its referenced inputs are planned into its context window (protocol 002). */
  context?: StepContextOptions;
}

// `run` is a method so that a TaskDefinition<{ topic: string }> is usable where any task is expected.
/** A task as defineTask returns it: start it with baton.start, invoke it with ctx.invoke, use it in a flow. */
/**
 * `In` is what the input schema accepts (fields with a default may be left out), `I` what it gives
 * the task; they differ only where the schema has defaults or transforms.
 */
export interface TaskDefinition<I = unknown, O = unknown, In = I> {
  readonly type: 'task';
  readonly name: string;
  readonly inputSchema: z.ZodType<I, In> | undefined;
  run(input: I, ctx: TaskContext): Promise<O> | O;
  readonly mode: string | undefined;
  readonly retryOptions: RetryOptions;
  readonly graceMs: number;
  readonly checkpointEvery: number | null;
  readonly agent: string | undefined;
  readonly kind: string | null;
  readonly version: number;
  readonly budgetMs: number | null;
  readonly concurrency: number | null;
  readonly ttlMs: number | null;
  readonly checkpointSchema: z.ZodType | undefined;
  readonly thresholds: Partial<TimeThresholds> | undefined;
  readonly degradation: DegradationTable | undefined;
  readonly escalation: {
    ask: boolean;
    policy: EscalationPolicy;
    decisionTimeoutMs: number | null;
    expectedFindings?: { min: number; max: number };
    wording?: Partial<EscalationWording>;
  };
  readonly onRetry: ((info: RetryInfo) => unknown | Promise<unknown>) | undefined;
  readonly onTimeout: 'retry' | 'park';
  readonly isolation: 'inline' | 'thread';
  readonly module: string | undefined;
  readonly permissions: RefPermissions | undefined;
  readonly context: StepContextOptions | undefined;
  /** The compiled retry policy for a run (mode and fast mode may differ per run). */
  policy(run: { mode?: string | undefined; fast?: boolean }): RetryPolicy;
}

const TASK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$/;

function optionError(field: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
}

function positiveInt(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw optionError(field, 'a positive integer', value);
  return value;
}

function positiveDuration(value: Duration, field: string): number {
  const ms = parseDuration(value, field);
  if (ms <= 0) throw optionError(field, 'greater than 0', value);
  return ms;
}

function toRetryOptions(
  o: Pick<TaskOptions<unknown, unknown>, 'retry' | 'timeout'>,
  research: ResolvedResearch,
  at: (f: string) => string,
): RetryOptions {
  const r = o.retry === false ? { maxRetries: 0 } : (o.retry ?? {});
  if (typeof r !== 'object' || r === null) throw optionError(at('retry'), 'an object or false', r);
  const { backoff, ...rest } = r as TaskRetryOptions;
  return {
    ...rest,
    ...research.retry,
    ...(o.timeout !== undefined ? { timeoutMs: positiveDuration(o.timeout, at('timeout')) } : {}),
    ...(research.mode !== undefined ? { mode: research.mode } : {}),
    ...(backoff !== undefined
      ? {
          backoffMs: Array.isArray(backoff)
            ? backoff.map((b, i) => parseDuration(b, at(`retry.backoff[${i}]`)))
            : (backoff as never),
        }
      : {}),
  };
}

function checkMode(retryOptions: RetryOptions, mode: string, field: string): void {
  lookupMode(resolveTimeouts(retryOptions, false, 'retry'), mode, field);
}

const TASK_KEYS = optionKeys<TaskOptions<unknown, unknown>>()(
  'name',
  'input',
  'run',
  'timeout',
  'grace',
  'retry',
  'checkpointEvery',
  'kind',
  'version',
  'budget',
  'concurrency',
  'ttl',
  'checkpointSchema',
  'time',
  'escalation',
  'research',
  'onRetry',
  'onTimeout',
  'isolation',
  'module',
  'permissions',
  'context',
);
const RETRY_KEYS = optionKeys<TaskRetryOptions>()(
  'timeoutMultipliers',
  'backoff',
  'maxRetries',
  'acceptPartial',
);
const ESCALATION_KEYS = optionKeys<EscalationOptions>()(
  'ask',
  'policy',
  'decisionTimeout',
  'expectedFindings',
  'wording',
);
const PERMISSION_KEYS = optionKeys<RefPermissions>()('roots', 'tables', 'runs');
const TIME_KEYS = optionKeys<NonNullable<TaskOptions<unknown, unknown>['time']>>()('thresholds');

/** Unknown keys in a task's options and their nested objects are typos: refuse them, named. */
function refuseUnknownTaskKeys(options: TaskOptions<unknown, unknown>, at: (f: string) => string): void {
  refuseUnknownKeys(options, TASK_KEYS, `task "${options.name}"`);
  if (options.retry) refuseUnknownKeys(options.retry, RETRY_KEYS, at('retry'));
  if (options.escalation) refuseUnknownKeys(options.escalation, ESCALATION_KEYS, at('escalation'));
  if (options.time) refuseUnknownKeys(options.time, TIME_KEYS, at('time'));
  if (options.permissions) {
    refuseUnknownKeys(options.permissions, PERMISSION_KEYS, at('permissions'));
    checkRunsPermission(options.permissions.runs, at('permissions.runs'));
  }
}

/** Defines a task: a named body with an input schema, a timeout, a budget, retries, checkpoints and partial results. */
export function defineTask<I, O, S = unknown, In = I>(
  options: TaskOptions<I, O, S, In>,
): TaskDefinition<I, O, In> {
  if (typeof options !== 'object' || options === null)
    throw optionError('defineTask(options)', 'an object', options);
  if (typeof options.name !== 'string' || !TASK_NAME.test(options.name))
    throw optionError('task.name', '1-128 letters, digits or _.:@/-', options.name);
  const at = (f: string) => `task "${options.name}".${f}`;
  refuseUnknownTaskKeys(options as TaskOptions<unknown, unknown>, at);
  if (typeof options.run !== 'function')
    throw optionError(at('run'), 'a function (input, ctx) => output', options.run);
  if (
    options.input !== undefined &&
    typeof (options.input as { safeParse?: unknown }).safeParse !== 'function'
  )
    throw optionError(at('input'), 'a zod schema', options.input);
  const research = resolveResearch(options.research, options.name, at);
  const retryOptions = toRetryOptions(options, research, at);
  // A mode is an option of the task (or of a run), not of its retry policy: name that field.
  if (research.mode !== undefined) checkMode(retryOptions, research.mode, at('research.mode'));
  // Compile both ways now: a bad option fails here, naming its field, not in the middle of a run.
  compileRetryPolicy(retryOptions, { field: at('retry') });
  compileRetryPolicy(retryOptions, { fast: true, field: at('retry') });
  const policies = new Map<string, RetryPolicy>();
  const esc = options.escalation ?? {};
  if (options.isolation === 'thread') {
    if (typeof options.module !== 'string')
      throw optionError(
        at('module'),
        'the module that exports the task (import.meta.url) when isolation is "thread"',
        options.module,
      );
    toModuleUrl(options.module);
  }
  if (options.isolation !== undefined && options.isolation !== 'inline' && options.isolation !== 'thread')
    throw optionError(at('isolation'), '"inline" or "thread"', options.isolation);
  if (options.onRetry !== undefined && typeof options.onRetry !== 'function')
    throw optionError(at('onRetry'), 'a function', options.onRetry);
  return Object.freeze({
    type: 'task' as const,
    name: options.name,
    inputSchema: options.input,
    run: options.run,
    mode: research.mode,
    retryOptions,
    graceMs: parseDuration(options.grace ?? 1_000, at('grace')),
    checkpointEvery:
      options.checkpointEvery === undefined
        ? null
        : positiveInt(at('checkpointEvery'), options.checkpointEvery),
    agent: research.agent,
    kind: options.kind ?? null,
    version: options.version === undefined ? 1 : positiveInt(at('version'), options.version),
    budgetMs: options.budget === undefined ? null : positiveDuration(options.budget, at('budget')),
    concurrency:
      options.concurrency === undefined ? null : positiveInt(at('concurrency'), options.concurrency),
    ttlMs: options.ttl === undefined ? null : parseDuration(options.ttl, at('ttl')),
    checkpointSchema: options.checkpointSchema,
    thresholds: options.time?.thresholds,
    degradation: degradationOf(
      options.time?.thresholds,
      research.degradationOptions,
      at('research.degradation'),
    ),
    escalation: {
      ask: esc.ask ?? false,
      policy: defineEscalationPolicy(esc.policy ?? {}, at('escalation.policy')),
      decisionTimeoutMs:
        esc.decisionTimeout === undefined
          ? null
          : positiveDuration(esc.decisionTimeout, at('escalation.decisionTimeout')),
      ...(esc.expectedFindings ? { expectedFindings: esc.expectedFindings } : {}),
      ...(esc.wording ? { wording: esc.wording } : {}),
    },
    onRetry: options.onRetry,
    onTimeout: options.onTimeout === 'park' ? 'park' : 'retry',
    permissions: options.permissions,
    context: options.context,
    isolation: options.isolation ?? 'inline',
    module: options.module,
    policy(run: { mode?: string | undefined; fast?: boolean }) {
      const mode = run.mode ?? retryOptions.mode;
      if (mode !== undefined && run.mode !== undefined) checkMode(retryOptions, mode, 'mode');
      const key = `${mode ?? ''}|${run.fast ? 1 : 0}`;
      let p = policies.get(key);
      if (!p) {
        p = compileRetryPolicy(
          { ...retryOptions, ...(mode !== undefined ? { mode } : {}) },
          { fast: run.fast ?? false, field: at('retry') },
        );
        policies.set(key, p);
      }
      return p;
    },
  }) as TaskDefinition<I, O, In>;
}

/** True for a value defineTask (or defineTool, defineAgentTask) made. */
export function isTaskDefinition(value: unknown): value is TaskDefinition {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'task';
}

/** Validates an input against the task's schema; the error names every failing field. */
export function parseTaskInput<I>(task: TaskDefinition<I>, input: unknown, field = 'input'): I {
  if (!task.inputSchema) return input as I;
  const result = task.inputSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = inputProblems(result.error, field);
  throw new BatonError('INVALID_INPUT', `input of task "${task.name}" is invalid: ${problems.join('; ')}`, {
    data: { task: task.name, problems },
  });
}

export function inputProblems(error: z.ZodError, field = 'input'): string[] {
  return error.issues.map((issue) => `${fieldPath(field, issue.path)}: ${issue.message}`);
}
