/**
 * Turning a task or flow plus an input into stored runs. Everything is validated first — input
 * schemas, plan shape, cycles, unknown tasks — and written in one transaction, so a bad request
 * stores nothing at all.
 */
import {
  assertJsonDepth,
  BatonError,
  findCycles,
  formatTraceparent,
  type NewEvent,
  newEvent,
  newId,
  optionKeys,
  type Plan,
  type PlanProblem,
  parseTraceparent,
  refuseUnknownKeys,
  ValidationError,
  validatePlan,
} from '../core/index.ts';
import { hasReferences, referencedTaskIds } from '../refs/index.ts';
import type { NewRun, TimerRecord } from '../store/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import type { FlowDefinition } from './define-flow.ts';
import { inputProblems, parseTaskInput, type TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import type { StoredRunOptions } from './run-options.ts';
import { logScheduleEnabled } from './scheduled-delivery.ts';
import { argsEvent, dueTimers, scheduleInput, type ToolInput } from './tool-input.ts';

/** Options of baton.start: the run id, budget, priority, delay, fast mode, research mode, escalation and more. */
export interface StartOptions {
  /** Your own id for the run (idempotency: a second start with the same id is refused). */
  id?: string;
  /** Time budget of this run, overriding the task's or flow's. */
  budget?: Duration;
  priority?: number;
  /** A module path that defines the run's tasks, so another process can resume it. */
  source?: string;
  /** Do not claim before this many ms from now. */
  delay?: Duration;
  /** Fast mode: timeouts halved, one retry, backoff 2 s then 5 s, partial results accepted readily. */
  fast?: boolean;
  /** Research mode for the timeouts (codebase, docs, external, dual), overriding the task's. */
  mode?: string;
  /** Who answers an escalation: a human ("ask") or the task's policy ("policy"). @default the task's setting */
  escalation?: 'ask' | 'policy';
  /** The caller's W3C `traceparent`; baton/otel makes it the parent of the run's span. */
  traceparent?: string;
  /**
   * A cap on every attempt's timeout, e.g. a serverless host's invocation limit less a margin (the
   * HTTP handler's `invocationTimeoutMs` sets it).
   */
  invocationTimeout?: Duration;
  /**
   * Your own options, kept with the run as `run.options.user`. The engine never reads them, so
   * they cannot collide with its own keys (`mode`, `schedule`, `ttlMs`, …).
   */
  options?: Record<string, unknown>;
}

const START_KEYS = optionKeys<StartOptions>()(
  'id',
  'budget',
  'priority',
  'source',
  'delay',
  'fast',
  'mode',
  'escalation',
  'traceparent',
  'invocationTimeout',
  'options',
);

/** The run-level options every run (and every step of a flow) carries. */
function runOptions(options: StartOptions): StoredRunOptions {
  refuseUnknownKeys(options, START_KEYS, 'start options');
  if (options.escalation !== undefined && options.escalation !== 'ask' && options.escalation !== 'policy')
    throw new BatonError(
      'INVALID_OPTION',
      `escalation must be "ask" or "policy", got ${JSON.stringify(options.escalation)}`,
    );
  const user = options.options;
  if (user !== undefined && (typeof user !== 'object' || user === null || Array.isArray(user)))
    throw new ValidationError('options', 'an object of your own options', user, { code: 'INVALID_OPTION' });
  let traceparent: string | undefined;
  if (options.traceparent !== undefined) {
    const parsed = parseTraceparent(options.traceparent);
    if (!parsed)
      throw new ValidationError(
        'traceparent',
        'a W3C traceparent (00-<trace id>-<span id>-<flags>)',
        options.traceparent,
        {
          code: 'INVALID_OPTION',
        },
      );
    traceparent = formatTraceparent(parsed);
  }
  return {
    ...(options.fast ? { fast: true } : {}),
    ...(options.mode !== undefined ? { mode: options.mode } : {}),
    ...(options.escalation !== undefined ? { escalation: options.escalation } : {}),
    ...(options.invocationTimeout !== undefined
      ? { invocationTimeoutMs: parseDuration(options.invocationTimeout, 'invocationTimeout') }
      : {}),
    ...(traceparent !== undefined ? { traceparent } : {}),
    ...(user !== undefined && Object.keys(user).length > 0 ? { user } : {}),
  };
}

/** Inputs above this size are refused; large data belongs in references, not inputs. @default 10 MB */
export const MAX_INPUT_BYTES = 10 * 1024 * 1024;

function checkSize(input: unknown, field: string): void {
  // Before anything walks it: a value nested thousands deep overflows recursive code (zod, stringify).
  assertJsonDepth(input, field);
  let text: string;
  try {
    text = JSON.stringify(input ?? null);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `${field} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (text.length > MAX_INPUT_BYTES)
    throw new BatonError(
      'INVALID_INPUT',
      `${field} is ${(text.length / 1_048_576).toFixed(1)} MB, above the ${MAX_INPUT_BYTES / 1_048_576} MB limit; pass large data by reference`,
      { data: { bytes: text.length, limit: MAX_INPUT_BYTES } },
    );
}

function runId(engine: Engine, options: StartOptions): string {
  const id = options.id ?? newId('run', engine.clock.now());
  if (!/^[A-Za-z0-9][A-Za-z0-9_:-]{0,127}$/.test(id))
    throw new BatonError(
      'INVALID_INPUT',
      `run id must be 1-128 letters, digits, _ : or -, got ${JSON.stringify(id)}`,
    );
  return id;
}

/** A run a task starts with `ctx.invoke`: its id is derived from the parent's, so a replay finds it. */
export interface ChildOf {
  id: string;
  parentId: string;
  rootId: string;
}

export async function startTask(
  engine: Engine,
  task: TaskDefinition,
  rawInput: unknown,
  options: StartOptions = {},
  child?: ChildOf,
): Promise<string> {
  checkSize(rawInput, 'input');
  const tool = scheduleInput(engine, task, rawInput);
  const input = parseTaskInput(task, tool.input);
  const id = child?.id ?? runId(engine, options);
  // An unknown mode fails here, naming it, before anything is stored.
  task.policy({ mode: options.mode ?? task.mode, fast: options.fast ?? false });
  const budgetMs = options.budget === undefined ? task.budgetMs : parseDuration(options.budget, 'budget');
  const delay = options.delay === undefined ? 0 : parseDuration(options.delay, 'delay');
  const created = engine.store.createRuns(
    [
      {
        id,
        ...(child ? { parentId: child.parentId, rootId: child.rootId } : {}),
        kind: 'task',
        name: task.name,
        input,
        status: 'queued',
        wakeAt: delay > 0 ? engine.clock.now() + delay : null,
        priority: options.priority ?? 0,
        budgetMs,
        source: options.source ?? null,
        options: {
          ...runOptions(options),
          ...(task.ttlMs !== null ? { ttlMs: task.ttlMs } : {}),
          ...(tool.schedule ? { schedule: tool.schedule } : {}),
          ...(tool.toolResult ? { toolResult: tool.toolResult } : {}),
        },
      },
    ],
    [
      newEvent(id, 'run:created', {
        name: task.name,
        kind: 'task',
        ...(child ? { parentId: child.parentId } : {}),
      }),
      ...(tool.isTool ? [argsEvent(id, task.name, input, tool.schedule)] : []),
      newEvent(id, 'run:queued', { reason: 'created' }),
    ],
    tool.schedule ? { timers: dueTimers(engine, id, tool.schedule) } : undefined,
  );
  if (delay <= 0) engine.offer([id]);
  await created;
  if (tool.schedule) logScheduleEnabled(engine.logger, tool.schedule);
  return id;
}

/**
 * A step whose input references another step's output depends on it (protocol 002, "resolution
 * timing": references to unfinished tasks resolve when those finish). Malformed references and
 * cycles through references are plan problems like any other.
 */
function addReferenceEdges(plan: Plan, problems: PlanProblem[]): void {
  const ids = new Set(plan.steps.map((s) => s.id));
  let added = false;
  for (const step of plan.steps) {
    let referenced: string[];
    try {
      referenced = referencedTaskIds(step.input);
    } catch (err) {
      problems.push({
        kind: 'bad_input',
        step: step.id,
        field: `steps[${step.index}].input`,
        message: (err as Error).message,
      });
      continue;
    }
    for (const id of referenced) {
      if (id === step.id)
        problems.push({
          kind: 'cycle',
          step: step.id,
          field: `steps[${step.index}].input`,
          message: `step "${step.id}" references its own output`,
        });
      else if (ids.has(id) && !step.dependsOn.includes(id)) {
        step.dependsOn.push(id);
        added = true;
      }
    }
  }
  if (!added) return;
  const known = new Set(problems.map((p) => p.message));
  for (const cycle of findCycles(plan.steps)) {
    const message = `cycle: ${[...cycle, cycle[0]].join(' → ')}`;
    if (!known.has(message))
      problems.push({ kind: 'cycle', step: cycle[0] ?? null, field: 'dependsOn', message });
  }
}

export function planError(problems: PlanProblem[], name: string): BatonError {
  const lines = problems.map((p) => `  - ${p.step === null ? '' : `[step ${p.step}] `}${p.message}`);
  return new BatonError(
    'PLAN_INVALID',
    `plan "${name}" has ${problems.length} problem(s):\n${lines.join('\n')}`,
    {
      data: { problems },
    },
  );
}

export async function startFlow(
  engine: Engine,
  flow: FlowDefinition,
  flowInput: unknown,
  options: StartOptions = {},
): Promise<string> {
  checkSize(flowInput, 'input');
  for (const t of flow.tasks) engine.tasks.register(t);
  const raw = flow.toRawPlan(flowInput);
  assertJsonDepth(raw, 'plan');
  const { plan, problems } = validatePlan(raw, {
    hasTask: (name) => engine.tasks.has(name),
    checkInput: (name, input) => {
      const task = engine.tasks.get(name);
      if (!task?.inputSchema || hasReferences(input)) return [];
      const parsed = task.inputSchema.safeParse(input);
      return parsed.success ? [] : inputProblems(parsed.error);
    },
  });
  addReferenceEdges(plan, problems);
  const schedules = new Map<string, ToolInput>();
  for (const step of plan.steps) {
    const task = engine.tasks.get(step.task);
    if (!task) continue;
    // A start option that no step can use is the caller's mistake, not the plan's: refuse it as such.
    if (options.mode !== undefined) task.policy({ mode: options.mode, fast: options.fast ?? false });
    const args =
      step.schedule === undefined ? step.input : { ...(step.input as object), schedule: step.schedule };
    try {
      schedules.set(step.id, scheduleInput(engine, task, args));
    } catch (err) {
      problems.push({
        kind: 'bad_input',
        step: step.id,
        field: `steps[${step.index}].input`,
        message: (err as Error).message,
      });
    }
  }
  if (problems.length > 0) throw planError(problems, flow.name);
  checkSize(raw, 'plan');
  const id = runId(engine, options);
  const budgetMs = options.budget === undefined ? flow.budgetMs : parseDuration(options.budget, 'budget');
  const runs: NewRun[] = [
    {
      id,
      kind: 'flow',
      name: flow.name,
      input: { input: flowInput ?? null, plan: raw },
      status: 'running',
      budgetMs,
      priority: options.priority ?? 0,
      source: options.source ?? null,
      options: {
        ...runOptions(options),
        ...(flow.outputStep ? { outputStep: flow.outputStep } : {}),
        ...(flow.ttlMs !== null ? { ttlMs: flow.ttlMs } : {}),
      },
    },
  ];
  const events: NewEvent[] = [newEvent(id, 'run:created', { name: flow.name, kind: 'flow' })];
  const timers: TimerRecord[] = [];
  for (const step of plan.steps) {
    const childId = `${id}.${step.id}`;
    const ready = step.dependsOn.length === 0;
    const tool = schedules.get(step.id);
    if (tool?.schedule) {
      timers.push(...dueTimers(engine, childId, tool.schedule));
      logScheduleEnabled(engine.logger, tool.schedule);
    }
    runs.push({
      id: childId,
      parentId: id,
      rootId: id,
      stepId: step.id,
      kind: 'task',
      name: step.task,
      input: tool?.input ?? step.input,
      status: ready ? 'queued' : 'waiting',
      waitReason: ready ? null : 'dependency',
      dependsOn: step.dependsOn,
      priority: options.priority ?? 0,
      budgetMs: engine.tasks.get(step.task)?.budgetMs ?? null,
      options: {
        ...runOptions(options),
        ...(tool?.schedule ? { schedule: tool.schedule } : {}),
        ...(tool?.toolResult ? { toolResult: tool.toolResult } : {}),
        ...(step.transfer !== undefined ? { transfer: step.transfer } : {}),
      },
    });
    events.push(
      newEvent(childId, 'run:created', { name: step.task, kind: 'task', stepId: step.id, parentId: id }),
    );
    if (tool?.isTool) events.push(argsEvent(childId, step.task, tool.input, tool.schedule));
    events.push(
      ready
        ? newEvent(childId, 'run:queued', { reason: 'created' })
        : newEvent(childId, 'run:waiting', { reason: 'dependency', detail: step.dependsOn.join(', ') }),
    );
  }
  const created = engine.store.createRuns(runs, events, { timers });
  engine.offer(plan.steps.filter((step) => step.dependsOn.length === 0).map((step) => `${id}.${step.id}`));
  await created;
  return id;
}
