/**
 * Tasks: named async functions with a validated input, a timeout, a retry policy, a checkpoint
 * interval, a time budget and a kind. Options are validated once, here, with messages that name
 * the field; the engine only ever sees the resolved form.
 */
import type { z } from 'zod';
import { BatonError, ValidationError } from '../core/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import type { TaskContext } from './task-context.ts';

export interface TaskRetryOptions {
  /** Timeout of retry n is the base timeout × timeoutMultipliers[n-1]. @default [2, 3] */
  timeoutMultipliers?: number[];
  /** Wait before retry n. @default ["5s", "15s"] */
  backoff?: Duration[];
}

export interface TaskOptions<I, O> {
  name: string;
  /** zod schema of the input; the run is refused (nothing stored) when the input fails it. */
  input?: z.ZodType<I>;
  run: (input: I, ctx: TaskContext) => Promise<O> | O;
  /** Timeout of the first attempt. @default no timeout */
  timeout?: Duration;
  /** Time the task gets after its signal fires to return what it has. @default "1s" */
  grace?: Duration;
  retry?: TaskRetryOptions | false;
  /** Checkpoint every N items (ctx.progress / ctx.checkpoint with itemsAnalyzed). */
  checkpointEvery?: number;
  /** A tool or research mode, e.g. "codebase", "docs", "external", "dual". */
  kind?: string;
  /** Bumped when the checkpoint or step shapes change; older checkpoints are then ignored. @default 1 */
  version?: number;
  /** Time budget of one run of this task (across attempts and restarts). */
  budget?: Duration;
  /** At most this many runs of this task at once, across all workers. */
  concurrency?: number;
  /** How long a finished run is kept. @default "24h" */
  ttl?: Duration;
  /** Validates a checkpoint's state before it is handed back on resume. */
  checkpointSchema?: z.ZodType;
}

export interface ResolvedRetry {
  timeoutMultipliers: number[];
  backoffMs: number[];
}

// `run` is a method so that a TaskDefinition<{ topic: string }> is usable where any task is expected.
export interface TaskDefinition<I = unknown, O = unknown> {
  readonly type: 'task';
  readonly name: string;
  readonly inputSchema: z.ZodType<I> | undefined;
  run(input: I, ctx: TaskContext): Promise<O> | O;
  readonly timeoutMs: number | null;
  readonly graceMs: number;
  readonly retry: ResolvedRetry;
  readonly checkpointEvery: number | null;
  readonly kind: string | null;
  readonly version: number;
  readonly budgetMs: number | null;
  readonly concurrency: number | null;
  readonly ttlMs: number | null;
  readonly checkpointSchema: z.ZodType | undefined;
}

export const DEFAULT_RETRY: ResolvedRetry = { timeoutMultipliers: [2, 3], backoffMs: [5_000, 15_000] };
const TASK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,127}$/;

function positiveInt(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new ValidationError(field, 'a positive integer', value, { code: 'INVALID_OPTION' });
  return value;
}

export function resolveRetry(retry: TaskRetryOptions | false | undefined, field = 'retry'): ResolvedRetry {
  if (retry === false) return { timeoutMultipliers: [], backoffMs: [] };
  if (retry === undefined) return DEFAULT_RETRY;
  if (typeof retry !== 'object' || retry === null)
    throw new ValidationError(field, 'an object or false', retry, { code: 'INVALID_OPTION' });
  const multipliers = retry.timeoutMultipliers ?? DEFAULT_RETRY.timeoutMultipliers;
  if (!Array.isArray(multipliers) || multipliers.length === 0)
    throw new ValidationError(
      `${field}.timeoutMultipliers`,
      'a non-empty array (use retry: false for none)',
      multipliers,
      {
        code: 'INVALID_OPTION',
      },
    );
  multipliers.forEach((m, i) => {
    if (typeof m !== 'number' || !Number.isFinite(m) || m < 1)
      throw new ValidationError(`${field}.timeoutMultipliers[${i}]`, '≥ 1', m, { code: 'INVALID_OPTION' });
  });
  const backoff = retry.backoff ?? DEFAULT_RETRY.backoffMs;
  const backoffMs = multipliers.map((_, i) =>
    parseDuration(
      backoff[Math.min(i, backoff.length - 1)] ?? 0,
      `${field}.backoff[${Math.min(i, backoff.length - 1)}]`,
    ),
  );
  return { timeoutMultipliers: [...multipliers], backoffMs };
}

export function defineTask<I, O>(options: TaskOptions<I, O>): TaskDefinition<I, O> {
  if (typeof options !== 'object' || options === null)
    throw new ValidationError('defineTask(options)', 'an object', options, { code: 'INVALID_OPTION' });
  if (typeof options.name !== 'string' || !TASK_NAME.test(options.name))
    throw new ValidationError('task.name', '1-128 letters, digits or _.:@/-', options.name, {
      code: 'INVALID_OPTION',
    });
  const at = (f: string) => `task "${options.name}".${f}`;
  if (typeof options.run !== 'function')
    throw new ValidationError(at('run'), 'a function (input, ctx) => output', options.run, {
      code: 'INVALID_OPTION',
    });
  if (
    options.input !== undefined &&
    typeof (options.input as { safeParse?: unknown }).safeParse !== 'function'
  )
    throw new ValidationError(at('input'), 'a zod schema', options.input, { code: 'INVALID_OPTION' });
  const timeoutMs = options.timeout === undefined ? null : parseDuration(options.timeout, at('timeout'));
  if (timeoutMs === 0)
    throw new ValidationError(at('timeout'), 'greater than 0', options.timeout, { code: 'INVALID_OPTION' });
  const budgetMs = options.budget === undefined ? null : parseDuration(options.budget, at('budget'));
  if (budgetMs === 0)
    throw new ValidationError(at('budget'), 'greater than 0', options.budget, { code: 'INVALID_OPTION' });
  return Object.freeze({
    type: 'task' as const,
    name: options.name,
    inputSchema: options.input,
    run: options.run,
    timeoutMs,
    graceMs: parseDuration(options.grace ?? 1_000, at('grace')),
    retry: resolveRetry(options.retry, at('retry')),
    checkpointEvery:
      options.checkpointEvery === undefined
        ? null
        : positiveInt(at('checkpointEvery'), options.checkpointEvery),
    kind: options.kind ?? null,
    version: options.version === undefined ? 1 : positiveInt(at('version'), options.version),
    budgetMs,
    concurrency:
      options.concurrency === undefined ? null : positiveInt(at('concurrency'), options.concurrency),
    ttlMs: options.ttl === undefined ? null : parseDuration(options.ttl, at('ttl')),
    checkpointSchema: options.checkpointSchema,
  });
}

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
  return error.issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
    return `${field}${path}: ${issue.message}`;
  });
}
