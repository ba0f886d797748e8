/**
 * Plans: a flow as data. An LLM planner emits JSON in the shape protocol 004 shows
 * (`{ "plan": { "steps": [{ "aiName", "draftArgs", "dependsOn": [0] }] } }`) or protocol 002 §7.1's
 * `{ "task_chain": [...] }`; TypeScript flows normalize to the same steps. Validation reports every problem at once, each with its step, so a
 * planner (or a person) can fix the whole plan in one round.
 */
import { describe as describeValue } from './errors.ts';
import { isSafeId } from './ids.ts';

export interface PlanStep {
  /** Unique within the plan. Index-addressed JSON steps get their index as id ("0", "1", …). */
  id: string;
  index: number;
  task: string;
  input: unknown;
  dependsOn: string[];
  schedule?: unknown;
  transfer?: unknown;
}

export interface Plan {
  steps: PlanStep[];
}

export const PlanProblemKinds = [
  'shape',
  'duplicate_id',
  'dangling',
  'cycle',
  'unknown_task',
  'bad_input',
] as const;
export type PlanProblemKind = (typeof PlanProblemKinds)[number];

export interface PlanProblem {
  kind: PlanProblemKind;
  /** The step's id when known, else its index as text; null for plan-level problems. */
  step: string | null;
  field: string;
  message: string;
}

export interface PlanCheckers {
  hasTask(name: string): boolean;
  /** Problems with a step's input for its task, as human-readable messages naming the field. */
  checkInput(task: string, input: unknown): string[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads the raw plan (either wrapped in `plan` or bare) into steps plus shape problems. */
/** What a plan step may say; `description` is a note for people (and planners) that Baton ignores. */
const STEP_KEYS: readonly string[] = [
  'id',
  'task',
  'aiName',
  'input',
  'draftArgs',
  'args',
  'dependsOn',
  'schedule',
  'transfer',
  'description',
];

/** What a protocol 002 §7.1 `task_chain` entry may say. */
const CHAIN_KEYS: readonly string[] = [
  'task_id',
  'agent',
  'input',
  'output_schema',
  'description',
  'schedule',
];

/**
 * Protocol 002 §7.1's `{ "task_chain": [{ task_id, agent, input: { data_references, transfer_config },
 * output_schema }] }` as plan steps: the step id is `task_id`, the task is the `agent`, the input's
 * `transfer_config` is the step's transfer, and its `data_references` stay in the input (resolved
 * when the step starts; a reference to an earlier entry is the dependency). `output_schema` names
 * what the entry produces; Baton does not check it.
 */
function taskChainSteps(chain: unknown[], problems: PlanProblem[]): unknown[] {
  return chain.map((entry, index) => {
    const field = `task_chain[${index}]`;
    if (!isObject(entry)) return entry;
    for (const key of Object.keys(entry)) {
      if (CHAIN_KEYS.includes(key)) continue;
      problems.push({
        kind: 'shape',
        step: String(index),
        field: `${field}.${key}`,
        message: `${field}.${key} is not a task_chain field; the fields are ${CHAIN_KEYS.join(', ')}`,
      });
    }
    if (entry.task_id === undefined)
      problems.push({
        kind: 'shape',
        step: String(index),
        field: `${field}.task_id`,
        message: `${field}.task_id must name the entry (other entries reference it), got nothing`,
      });
    const input = entry.input ?? {};
    let transfer: unknown;
    let stepInput: unknown = input;
    if (isObject(input) && input.transfer_config !== undefined) {
      const { transfer_config, ...rest } = input;
      transfer = transfer_config;
      stepInput = rest;
    }
    return {
      id: entry.task_id,
      task: entry.agent,
      input: stepInput,
      ...(transfer !== undefined ? { transfer } : {}),
      ...(entry.schedule !== undefined ? { schedule: entry.schedule } : {}),
    };
  });
}

export function normalizePlan(raw: unknown): { plan: Plan; problems: PlanProblem[] } {
  const problems: PlanProblem[] = [];
  if (isObject(raw) && Array.isArray(raw.task_chain)) {
    const extra = Object.keys(raw).filter((k) => k !== 'task_chain');
    for (const key of extra)
      problems.push({
        kind: 'shape',
        step: null,
        field: key,
        message: `${key} is not a plan field next to task_chain`,
      });
    const chained = normalizePlan({ steps: taskChainSteps(raw.task_chain, problems) });
    const named = chained.problems.map((p) => ({
      ...p,
      field: p.field.replace(/^steps/, 'task_chain'),
      message: p.message.replace(/steps\[/g, 'task_chain['),
    }));
    return { plan: chained.plan, problems: [...problems, ...named] };
  }
  const body = isObject(raw) && isObject(raw.plan) ? raw.plan : raw;
  const root = isObject(raw) && isObject(raw.plan) ? 'plan' : '';
  const at = (f: string) => (root ? `${root}.${f}` : f);
  if (!isObject(body) || !Array.isArray(body.steps)) {
    problems.push({
      kind: 'shape',
      step: null,
      field: at('steps'),
      message: `${at('steps')} must be an array of steps, got ${describeValue(isObject(body) ? body.steps : body)}`,
    });
    return { plan: { steps: [] }, problems };
  }
  if (body.steps.length === 0)
    problems.push({
      kind: 'shape',
      step: null,
      field: at('steps'),
      message: `${at('steps')} must not be empty`,
    });

  const rawSteps = body.steps as unknown[];
  const steps: PlanStep[] = [];
  const rawDeps: Array<unknown[]> = [];
  rawSteps.forEach((s, index) => {
    const field = `${at('steps')}[${index}]`;
    if (!isObject(s)) {
      problems.push({ kind: 'shape', step: String(index), field, message: `${field} must be an object` });
      return;
    }
    for (const key of Object.keys(s)) {
      if (STEP_KEYS.includes(key)) continue;
      problems.push({
        kind: 'shape',
        step: String(index),
        field: `${field}.${key}`,
        message: `${field}.${key} is not a step field (a typo would silently drop it); the fields are ${STEP_KEYS.join(', ')}`,
      });
    }
    const id = s.id === undefined ? String(index) : s.id;
    if (typeof id !== 'string' || !isSafeId(id)) {
      problems.push({
        kind: 'shape',
        step: String(index),
        field: `${field}.id`,
        message: `${field}.id must be 1-128 letters, digits or _.:- , got ${describeValue(id)}`,
      });
    }
    const task = s.task ?? s.aiName;
    if (typeof task !== 'string' || task.length === 0) {
      problems.push({
        kind: 'shape',
        step: String(id),
        field: `${field}.task`,
        message: `${field} must name its task in "task" or "aiName", got ${describeValue(task)}`,
      });
    }
    const deps = s.dependsOn ?? [];
    if (!Array.isArray(deps)) {
      problems.push({
        kind: 'shape',
        step: String(id),
        field: `${field}.dependsOn`,
        message: `${field}.dependsOn must be an array of step indexes or ids, got ${describeValue(deps)}`,
      });
    }
    rawDeps.push(Array.isArray(deps) ? deps : []);
    steps.push({
      id: String(id),
      index,
      task: typeof task === 'string' ? task : '',
      input: s.input ?? s.draftArgs ?? s.args ?? {},
      dependsOn: [],
      ...(s.schedule !== undefined ? { schedule: s.schedule } : {}),
      ...(s.transfer !== undefined ? { transfer: s.transfer } : {}),
    });
  });

  const byId = new Map<string, PlanStep>();
  for (const step of steps) {
    if (byId.has(step.id)) {
      problems.push({
        kind: 'duplicate_id',
        step: step.id,
        field: `${at('steps')}[${step.index}].id`,
        message: `step id "${step.id}" is used by steps ${byId.get(step.id)?.index} and ${step.index}`,
      });
    } else byId.set(step.id, step);
  }

  const byIndex = new Map(steps.map((s) => [s.index, s]));
  steps.forEach((step, i) => {
    const deps = rawDeps[i] ?? [];
    const added = new Set<string>();
    deps.forEach((d, j) => {
      const field = `${at('steps')}[${step.index}].dependsOn[${j}]`;
      let target: PlanStep | undefined;
      if (typeof d === 'number' && Number.isInteger(d)) target = byIndex.get(d);
      else if (typeof d === 'string') target = byId.get(d);
      if (!target) {
        problems.push({
          kind: 'dangling',
          step: step.id,
          field,
          message: `${field} points to ${describeValue(d)}, which is not a step of this plan`,
        });
      } else if (target === step) {
        problems.push({
          kind: 'cycle',
          step: step.id,
          field,
          message: `step "${step.id}" depends on itself`,
        });
      } else if (!added.has(target.id)) {
        added.add(target.id);
        step.dependsOn.push(target.id);
      }
    });
  });

  for (const cycle of findCycles(steps)) {
    problems.push({
      kind: 'cycle',
      step: cycle[0] ?? null,
      field: 'dependsOn',
      message: `cycle: ${cyclePath(cycle)}`,
    });
  }
  return { plan: { steps }, problems };
}

/** "a → b → a"; a long cycle shows its first 20 steps and how many more there are. */
function cyclePath(cycle: readonly string[]): string {
  const shown = cycle.length > 20 ? [...cycle.slice(0, 20), `… ${cycle.length - 20} more`] : [...cycle];
  return [...shown, cycle[0]].join(' → ');
}

/** Every cycle (one per strongly connected component with more than one step), in dependency order. */
export function findCycles(steps: readonly PlanStep[]): string[][] {
  // With duplicate ids the first step keeps the id (as in normalizePlan).
  const byId = new Map<string, PlanStep>();
  for (const s of steps) if (!byId.has(s.id)) byId.set(s.id, s);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;

  // Tarjan's algorithm with an explicit stack of (step, next edge) frames: a plan of thousands of
  // steps chained one after another must not overflow the call stack.
  const open = (id: string) => {
    index.set(id, counter);
    low.set(id, counter);
    counter++;
    stack.push(id);
    onStack.add(id);
  };
  const visit = (rootId: string) => {
    open(rootId);
    const frames: Array<{ id: string; edge: number }> = [{ id: rootId, edge: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { id: string; edge: number };
      const { id } = frame;
      const deps = byId.get(id)?.dependsOn ?? [];
      if (frame.edge < deps.length) {
        const dep = deps[frame.edge++] as string;
        if (!index.has(dep)) {
          open(dep);
          frames.push({ id: dep, edge: 0 });
        } else if (onStack.has(dep)) low.set(id, Math.min(low.get(id) as number, index.get(dep) as number));
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id) as number, low.get(id) as number));
      if (low.get(id) === index.get(id)) {
        const component: string[] = [];
        let top: string | undefined;
        do {
          top = stack.pop() as string;
          onStack.delete(top);
          component.push(top);
        } while (top !== id);
        if (component.length > 1) cycles.push(orderCycle(component, byId));
      }
    }
  };
  for (const id of byId.keys()) if (!index.has(id)) visit(id);
  return cycles;
}

/** Walks the component along dependency edges so the message reads as a path. */
function orderCycle(component: string[], byId: Map<string, PlanStep>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0] as string;
  const path = [start];
  const seen = new Set(path);
  let current = start;
  for (;;) {
    const next = byId.get(current)?.dependsOn.find((d) => members.has(d) && !seen.has(d));
    if (!next) break;
    path.push(next);
    seen.add(next);
    current = next;
  }
  return path;
}

/** Full validation: shape, ids, edges, cycles, then tasks and inputs. Returns all problems. */
export function validatePlan(raw: unknown, checkers: PlanCheckers): { plan: Plan; problems: PlanProblem[] } {
  const { plan, problems } = normalizePlan(raw);
  for (const step of plan.steps) {
    if (!step.task) continue;
    if (!checkers.hasTask(step.task)) {
      problems.push({
        kind: 'unknown_task',
        step: step.id,
        field: `steps[${step.index}].task`,
        message: `step "${step.id}" uses unknown task "${step.task}"`,
      });
      continue;
    }
    for (const message of checkers.checkInput(step.task, step.input)) {
      problems.push({ kind: 'bad_input', step: step.id, field: `steps[${step.index}].input`, message });
    }
  }
  return { plan, problems };
}

/** Steps in an order where each comes after its dependencies (the plan must be acyclic). */
export function topologicalOrder(plan: Plan): PlanStep[] {
  const done = new Set<string>();
  const out: PlanStep[] = [];
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  // Depth-first with an explicit stack (long dependency chains must not overflow the call stack):
  // a step is emitted after all its dependencies, in the order a recursive walk would emit it.
  for (const first of plan.steps) {
    if (done.has(first.id)) continue;
    done.add(first.id);
    const frames: Array<{ step: PlanStep; edge: number }> = [{ step: first, edge: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { step: PlanStep; edge: number };
      if (frame.edge < frame.step.dependsOn.length) {
        const dep = byId.get(frame.step.dependsOn[frame.edge++] as string);
        if (dep && !done.has(dep.id)) {
          done.add(dep.id);
          frames.push({ step: dep, edge: 0 });
        }
        continue;
      }
      frames.pop();
      out.push(frame.step);
    }
  }
  return out;
}
