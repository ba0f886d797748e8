/**
 * Flows: a DAG of steps over tasks, written in TypeScript (`defineFlow`) or loaded from a JSON plan
 * (`loadPlan`, the shape an LLM planner emits). Both become the same `Plan` before they start.
 */
import { readFileSync } from 'node:fs';
import { BatonError, optionKeys, refuseUnknownKeys, ValidationError } from '../core/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import { isTaskDefinition, type TaskDefinition } from './define-task.ts';

/** A data reference in a step's input, resolved when the step starts (protocol 002). */
export interface StepReference {
  data_reference: object;
  fallback_config?: object;
}

/**
 * A value of type `T` in which any field (or the whole value) may be a data reference: what a step
 * written in code may pass to a task whose input is `T`.
 */
export type WithReferences<T> =
  | StepReference
  | (T extends readonly (infer E)[]
      ? WithReferences<E>[]
      : T extends (...args: never[]) => unknown
        ? T
        : T extends object
          ? { [K in keyof T]: WithReferences<T[K]> }
          : T);

/** What a flow step may name as its task: a definition, or a name registered on the Baton instance. */
// biome-ignore lint/suspicious/noExplicitAny: any task, whatever its input and output types
export type FlowTask = TaskDefinition<any, any> | string;

type LooseInput = Record<string, unknown> | unknown[] | string | number | boolean | null;

/**
 * A step's input, checked against what its task's input schema accepts (a field with a default may
 * be left out) where the task is a definition: a value,
 * or a function of the flow's input evaluated when the flow starts. A task named by string is
 * looked up at start, so its input is checked then (by its schema).
 */
export type StepInputFor<FI, T> =
  T extends TaskDefinition<unknown, unknown, infer I>
    ? 0 extends 1 & I
      ? ((flowInput: FI) => unknown) | LooseInput
      : WithReferences<I> | ((flowInput: FI) => WithReferences<I>)
    : ((flowInput: FI) => unknown) | LooseInput;

/** Where the flow's input type is read from: a step input written as a function of it. */
interface FlowInputOf<FI> {
  input?: ((flowInput: FI) => unknown) | LooseInput;
  // The step's other fields are checked by FlowStepOptions; this part only carries FI.
  [field: string]: unknown;
}

/** One step of a flow: the task, its input and the steps it depends on. */
export interface FlowStepOptions<FI, T extends FlowTask = FlowTask> {
  id: string;
  /** A task definition, or a task name registered on the Baton instance. */
  task: T;
  /** The step's input, of the task's input type (data references allowed in any field). */
  input?: StepInputFor<FI, T>;
  dependsOn?: string[];
  schedule?: unknown;
  transfer?: unknown;
}

/** Options of defineFlow: its name, steps and time budget. */
export interface FlowOptions<FI, T extends readonly FlowTask[] = readonly FlowTask[]> {
  name: string;
  /** The steps; each one's input is checked against its task's input type at compile time. */
  steps: { [K in keyof T]: FlowStepOptions<FI, T[K]> } & readonly FlowInputOf<FI>[];
  /** The step whose output is the flow's output; without it the output maps step ids to outputs. */
  output?: string;
  budget?: Duration;
  ttl?: Duration;
}

/** A flow as defineFlow returns it; start it with baton.start like a task. */
export interface FlowDefinition<FI = unknown> {
  readonly type: 'flow';
  readonly name: string;
  readonly outputStep: string | null;
  readonly budgetMs: number | null;
  readonly ttlMs: number | null;
  /** Task definitions the flow carries (registered on start). */
  readonly tasks: readonly TaskDefinition[];
  /** The raw plan (as JSON would be), with inputs evaluated for this flow input. */
  toRawPlan(input: FI): { steps: Array<Record<string, unknown>> };
}

const FLOW_KEYS = optionKeys<FlowOptions<unknown>>()('name', 'steps', 'output', 'budget', 'ttl');
const STEP_KEYS = optionKeys<FlowStepOptions<unknown>>()(
  'id',
  'task',
  'input',
  'dependsOn',
  'schedule',
  'transfer',
);

/** Defines a flow: steps (tasks) with dependencies, run as a DAG in which each step is its own durable run. */
export function defineFlow<FI = unknown, const T extends readonly FlowTask[] = readonly FlowTask[]>(
  options: FlowOptions<FI, T>,
): FlowDefinition<FI> {
  if (typeof options?.name !== 'string' || options.name.length === 0)
    throw new ValidationError('flow.name', 'a non-empty string', options?.name, { code: 'INVALID_OPTION' });
  if (!Array.isArray(options.steps))
    throw new ValidationError(`flow "${options.name}".steps`, 'an array', options.steps, {
      code: 'INVALID_OPTION',
    });
  refuseUnknownKeys(options, FLOW_KEYS, `flow "${options.name}"`);
  options.steps.forEach((step, i) => {
    refuseUnknownKeys(step, STEP_KEYS, `flow "${options.name}".steps[${i}]`);
  });
  const tasks = options.steps.map((s) => s.task).filter(isTaskDefinition);
  return Object.freeze({
    type: 'flow' as const,
    name: options.name,
    outputStep: options.output ?? null,
    budgetMs:
      options.budget === undefined ? null : parseDuration(options.budget, `flow "${options.name}".budget`),
    ttlMs: options.ttl === undefined ? null : parseDuration(options.ttl, `flow "${options.name}".ttl`),
    tasks,
    toRawPlan(input: FI) {
      return {
        steps: options.steps.map((s) => ({
          id: s.id,
          task: typeof s.task === 'string' ? s.task : s.task.name,
          input: typeof s.input === 'function' ? (s.input as (i: FI) => unknown)(input) : (s.input ?? {}),
          dependsOn: s.dependsOn ?? [],
          ...(s.schedule !== undefined ? { schedule: s.schedule } : {}),
          ...(s.transfer !== undefined ? { transfer: s.transfer } : {}),
        })),
      };
    },
  });
}

/** A flow from a JSON plan: `{ "plan": { "steps": [...] } }` or `{ "steps": [...] }`. */
export function loadPlan(raw: unknown, name = 'plan'): FlowDefinition<unknown> {
  const body =
    typeof raw === 'object' && raw !== null && 'plan' in raw ? (raw as { plan: unknown }).plan : raw;
  const output =
    typeof body === 'object' && body !== null && typeof (body as { output?: unknown }).output === 'string'
      ? ((body as { output: string }).output ?? null)
      : null;
  return Object.freeze({
    type: 'flow' as const,
    name,
    outputStep: output,
    budgetMs: null,
    ttlMs: null,
    tasks: [],
    toRawPlan: () => body as { steps: Array<Record<string, unknown>> },
  });
}

/** Reads a plan file; a file that is not JSON gets an error naming the file and the position. */
export function readPlanFile(path: string): FlowDefinition<unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot read plan ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BatonError('PLAN_INVALID', `plan ${path} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
      data: { path },
    });
  }
  return loadPlan(raw, path.replace(/^.*\//, '').replace(/\.json$/i, ''));
}

/** True for a value defineFlow made. */
export function isFlowDefinition(value: unknown): value is FlowDefinition {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'flow';
}
