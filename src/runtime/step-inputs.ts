/**
 * Turning a step's input with `data_reference`s into what the task reads (protocol 002): every
 * reference is resolved (task outputs, files, declared tables; failures handled by the fallback
 * table), then the resolved values are planned into the step's context budget (full, summary,
 * reference with preview, or batched references) and the protocol's `context_management` report is
 * recorded as an event. The whole preparation is memoized as a step, so a retry or a resume after a
 * crash sees exactly the data the first attempt saw.
 */
import type { ContextInput, ContextPlanner, ContextPlannerOptions } from '../context/index.ts';
import type { BatonEventMap } from '../core/index.ts';
import {
  createResolver,
  type DataReference,
  type GetTaskOutput,
  hasReferences,
  type Pointer,
  type RefPermissions,
  type Resolver,
  type ResolverOptions,
} from '../refs/index.ts';
import type { Store } from '../store/index.ts';
import type { Clock } from '../time/index.ts';
import type { AttemptContext } from './attempt-context.ts';
import type { TaskDefinition } from './define-task.ts';

/** The run a reference is resolved for: its flow (parent) and its root run (its scope). */
export interface ReadingRun {
  parentId: string | null;
  rootId: string;
}

export interface StepInputs {
  /**
   * A resolver reading task outputs relative to the flow the run belongs to. `deferSummary`: a
   * `transform: "summary"` hands the selection on as it is, for the context plan to summarize as
   * text within the step's budget (unless a `refs.summarize` is configured). Resolve with
   * `scopeOf(run)`: the run reads only its own flow's outputs and history.
   */
  resolverFor(run: ReadingRun, options?: { deferSummary?: boolean }): Resolver;
  planner(): Promise<ContextPlanner>;
}

/**
 * Least privilege (issue 11 item 8): a run's references read within its root run — the flow it
 * belongs to, with its steps and invoked children — unless its task is permitted `runs: "any"`.
 */
export const scopeOf = (run: ReadingRun): string => run.rootId;

export type RefsOptions = Omit<ResolverOptions, 'getTaskOutput' | 'clock'>;

/**
 * Reads a step's sibling by step id (same flow), else a run by id. Every record carries its root
 * as its scope, so the resolver refuses a run of another flow; only ended usable runs resolve.
 */
function taskOutputs(store: Store, flowId: string | null): GetTaskOutput {
  return async (taskId) => {
    const run =
      (flowId ? await store.getRun(`${flowId}.${taskId}`) : undefined) ?? (await store.getRun(taskId));
    if (!run) return { status: 'missing' };
    const scope = run.rootId;
    if (run.status === 'succeeded' || run.status === 'partial')
      return { status: run.status, output: run.output, scope };
    return {
      status:
        run.status === 'failed' || run.status === 'cancelled' || run.status === 'expired'
          ? run.status
          : 'pending',
      scope,
    };
  };
}

export function createStepInputs(
  store: Store,
  clock: Clock,
  refs: RefsOptions,
  context: ContextPlannerOptions | undefined,
): StepInputs {
  // Validate the options once, at the edge, so a bad workspace or table declaration fails at start-up.
  createResolver({ ...refs, clock, getTaskOutput: async () => ({ status: 'missing' }) });
  // The planner (token counting, transfer tables: ~30 modules) loads when a step first has
  // references to plan, not when Baton is imported (issue 15 item 4).
  let plannerPromise: Promise<ContextPlanner> | undefined;
  return {
    resolverFor: (run, options = {}) =>
      createResolver({
        ...refs,
        ...(options.deferSummary && refs.summarize === undefined ? { summarize: (v: unknown) => v } : {}),
        clock,
        getTaskOutput: taskOutputs(store, run.parentId),
      }),
    planner: () => {
      plannerPromise ??= import('../context/index.ts').then((m) => m.createContextPlanner(context));
      return plannerPromise;
    },
  };
}

/** The input's own key when it has one (`papers`), else the protocol's style (`scholar_output`). */
function nameOf(ref: DataReference | undefined, pointer: Pointer, taken: Set<string>): string {
  const key = pointer.at(-1);
  const own = key !== undefined && !/^\d+$/.test(key) && key !== 'data_reference' ? key : undefined;
  const protocolName =
    ref?.ref_type === 'task_output'
      ? `${ref.task_id}_output`
      : ref?.ref_type === 'db_query'
        ? `${ref.table}_query`
        : ref?.ref_type === 'file'
          ? (ref.path.split('/').pop() ?? 'file')
          : pointer.join('.') || 'input';
  const base = own ?? protocolName;
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
  taken.add(name);
  return name;
}

function getAt(root: unknown, pointer: Pointer): unknown {
  let node = root;
  for (const key of pointer) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

function setAt(root: unknown, pointer: Pointer, value: unknown): unknown {
  if (pointer.length === 0) return value;
  const [head, ...rest] = pointer as [string, ...string[]];
  if (Array.isArray(root)) {
    const copy = [...root];
    copy[Number(head)] = setAt(copy[Number(head)], rest, value);
    return copy;
  }
  const obj = (root ?? {}) as Record<string, unknown>;
  return { ...obj, [head]: setAt(obj[head], rest, value) };
}

export interface StepContextOptions {
  agent?: string;
  taskType?: string;
  /** Data types (text, code, claim, table, …) by input name, for the data-type table and priorities. */
  dataTypes?: Record<string, string>;
  /** Turn planning off: references are resolved and passed as they are. @default true */
  plan?: boolean;
}

export interface PreparedInput {
  input: unknown;
  report?: BatonEventMap['context:planned']['report'];
}

/** Resolves and plans the references in `input`; inputs without references come back unchanged. */
export async function prepareStepInput(
  inputs: StepInputs,
  ctx: AttemptContext,
  task: TaskDefinition,
  input: unknown,
  run: ReadingRun,
  step: { transfer?: unknown; fallback?: unknown; permissions?: RefPermissions },
): Promise<PreparedInput> {
  // Whether there is anything to resolve; the references are validated by the resolver, which
  // ignores a bad filter as 002 §3.2 says instead of failing the step.
  if (!hasReferences(input)) return { input };
  // One memoized step: retries and resumes reuse the data the first attempt resolved.
  return ctx.step('baton:inputs', async () => {
    // With a context plan, "summary" means a summary of the text, made by the planner within the
    // step's budget — not the resolver's structural one (counts and keys): the Validator of 002
    // §7.1 must read the claims.
    const planning = task.context?.plan !== false;
    const resolver = inputs.resolverFor(run, { deferSummary: planning });
    const resolved = await resolver.resolveInput(input, {
      scope: scopeOf(run),
      ...((step.permissions ?? task.permissions)
        ? { permissions: step.permissions ?? task.permissions }
        : {}),
      ...(step.fallback !== undefined ? { fallback: step.fallback as never } : {}),
      signal: ctx.signal,
    });
    ctx.emitEvent('refs:resolved', {
      count: resolved.resolved.length,
      bytes: resolved.resolved.reduce((n, r) => n + r.bytes, 0),
      failures: resolved.failures.map((f) => ({ ...f })),
    });
    const options = task.context;
    if (options?.plan === false) return { input: resolved.input };
    const taken = new Set<string>();
    const planned: Array<{ pointer: Pointer; input: ContextInput }> = resolved.resolved
      .filter((r) => !r.skipped)
      .map((r) => {
        const name = nameOf(r.ref, r.pointer, taken);
        const dataType = options?.dataTypes?.[name];
        return {
          pointer: r.pointer,
          input: {
            name,
            value: getAt(resolved.input, r.pointer),
            ...(r.ref ? { refInfo: r.ref } : {}),
            ...(dataType ? { dataType } : {}),
            ...(r.ref?.ref_type === 'task_output' && r.ref.transform === 'summary'
              ? { transferConfig: { ...(step.transfer as object | undefined), mode: 'summary' as const } }
              : {}),
          },
        };
      });
    const planner = await inputs.planner();
    const plan = await planner.planContext({
      taskId: ctx.stepId ?? ctx.taskName,
      agent: options?.agent ?? 'default',
      ...(options?.taskType ? { taskType: options.taskType } : {}),
      inputs: planned.map((p) => p.input),
      ...(step.transfer !== undefined ? { transferConfig: step.transfer as never } : {}),
      signal: ctx.signal,
    });
    let out = resolved.input;
    planned.forEach((p, i) => {
      out = setAt(out, p.pointer, plan.inputs[i]?.transfer ?? null);
    });
    const report = plan.report as unknown as BatonEventMap['context:planned']['report'];
    ctx.emitEvent('context:planned', { report, notes: plan.notes });
    return { input: out, report };
  });
}
