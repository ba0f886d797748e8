import { BatonError, ValidationError } from '../core/index.ts';
import {
  defineTask,
  type TaskContext,
  type TaskDefinition,
  type TaskOptions,
  type TaskRetryOptions,
} from '../runtime/index.ts';
import { declaresSchedule, splitSchedule } from '../schedule/index.ts';
import { compileArgsCheck, type JsonSchemaObject, schemaWithoutSchedule } from './args-validator.ts';
import {
  type PreparedToolArgs,
  type PrepareToolArgsOptions,
  prepareToolArgs,
  scheduleNotSupported,
} from './prepare-tool-args.ts';

/**
 * A tool is a task whose input is an argument object described by a JSON Schema (the shape LLM
 * tool calls and the protocol's `config.json` use). Being a task, it gets timeouts, retries and
 * durability from the engine. Only a tool whose schema declares `schedule` accepts one (protocol
 * 004's opt-in), and `schedule` is taken off the arguments before the handler sees them.
 */

export type ToolArgs = Record<string, unknown>;

/** What the task's `run` receives: the arguments, maybe still with the `schedule` the engine read. */
export type ToolInput<A> = A & { schedule?: unknown };

/** The task options a tool may set; `input` and `run` are the tool's own (`inputSchema`, `handler`). */
export type ToolTaskOptions<O = unknown> = Omit<
  TaskOptions<ToolArgs, O>,
  'name' | 'input' | 'run' | 'retry'
> & {
  /**
   * Retries of the tool call. Tools do not retry unless asked: a tool timeout is delivered at once
   * (protocol 004).
   * @default false
   */
  retry?: TaskRetryOptions | false;
};

/** Options of defineTool: name, JSON Schema of the arguments, handler and task options. */
export interface DefineToolOptions<A extends object = ToolArgs, O = unknown> extends ToolTaskOptions<O> {
  /** The tool's name, as a model calls it: letters, digits and `_ . : -`, at most 128. */
  name: string;
  description?: string;
  /** JSON Schema of the arguments (draft-07 unless `$schema` says 2019-09 or 2020-12). */
  inputSchema: JsonSchemaObject;
  /** Gets the arguments checked against `inputSchema`, without `schedule`. */
  handler: (args: A, ctx: TaskContext) => Promise<O> | O;
}

/** The tool as a model or a tool list sees it. */
export interface ToolInfo {
  readonly name: string;
  readonly description: string | undefined;
  /** The schema as given, `schedule` included (deep-frozen copy). */
  readonly inputSchema: JsonSchemaObject;
  /** True when `inputSchema.properties` declares `schedule`. */
  readonly acceptsSchedule: boolean;
}

/** A tool as defineTool returns it (a task with an argument schema). */
export interface ToolDefinition<A extends object = ToolArgs, O = unknown>
  extends TaskDefinition<ToolInput<A>, O> {
  readonly tool: ToolInfo;
  /** Checks arguments that no longer carry `schedule`; returns them, or throws INVALID_INPUT listing every problem. */
  checkArgs(args: unknown): A;
  /** `prepareToolArgs` for this tool: the engine calls it before storing a run (no import needed). */
  prepareArgs(args: unknown, options: PrepareToolArgsOptions): PreparedToolArgs<A>;
}

const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Letters, digits and `_ . : -`, starting with a letter or digit: no `/`, so never a path. */
export function isToolName(value: unknown): value is string {
  return typeof value === 'string' && TOOL_NAME.test(value);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function optionError(field: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
}

/** The error for a `schedule` given to a tool that did not opt in. */

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A private JSON copy: the schema is shown to models and must not change after it was compiled. */
function copySchema(schema: unknown, field: string): JsonSchemaObject {
  if (!isRecord(schema)) throw optionError(field, 'a JSON Schema object', schema);
  let copy: unknown;
  try {
    copy = JSON.parse(JSON.stringify(schema));
  } catch (err) {
    throw new BatonError('INVALID_OPTION', `${field} must be JSON: ${(err as Error).message}`, {
      cause: err,
      data: { field },
    });
  }
  const type = (copy as Record<string, unknown>).type;
  if (type !== undefined && type !== 'object')
    throw optionError(`${field}.type`, '"object" (tool arguments are an object)', type);
  return deepFreeze(copy as JsonSchemaObject);
}

/** Defines a tool: a task whose arguments are checked against a JSON Schema (protocol 004). */
export function defineTool<A extends object = ToolArgs, O = unknown>(
  options: DefineToolOptions<A, O>,
): ToolDefinition<A, O> {
  if (!isRecord(options)) throw optionError('defineTool(options)', 'an object', options);
  const { name, description, inputSchema, handler, retry, ...taskOptions } = options;
  if (!isToolName(name))
    throw optionError('tool.name', '1-128 letters, digits or _.:- starting with a letter or digit', name);
  const at = (f: string) => `tool "${name}".${f}`;
  for (const own of ['input', 'run'] as const)
    if (Object.hasOwn(taskOptions, own))
      throw optionError(
        at(own),
        'absent: a tool has inputSchema and handler instead',
        (taskOptions as ToolArgs)[own],
      );
  if (typeof handler !== 'function')
    throw optionError(at('handler'), 'a function (args, ctx) => result', handler);
  if (description !== undefined && typeof description !== 'string')
    throw optionError(at('description'), 'a string', description);
  const schema = copySchema(inputSchema, at('inputSchema'));
  const acceptsSchedule = declaresSchedule(schema);
  const check = compileArgsCheck(schemaWithoutSchedule(schema), at('inputSchema'));

  const checkArgs = (args: unknown): A => {
    if (!isRecord(args)) throw new ValidationError('args', 'an object of tool arguments', args);
    const problems = check(args);
    if (problems.length > 0)
      throw new BatonError(
        'INVALID_INPUT',
        `arguments of tool "${name}" are invalid: ${problems.join('; ')}`,
        {
          data: { tool: name, problems },
        },
      );
    return args as A;
  };

  const task = defineTask<ToolInput<A>, O>({
    ...(taskOptions as Omit<TaskOptions<ToolInput<A>, O>, 'name' | 'run'>),
    name,
    retry: retry ?? false,
    // A tool that runs out of time or fails returns its error (protocol 004: "返回超时错误"), at once;
    // partial findings, if it recorded any, are still handed back.
    escalation: taskOptions.escalation ?? { policy: { otherwise: ['abandon'] } },
    // Referenced arguments arrive as values that must match the schema, not as context transfers.
    context: taskOptions.context ?? { plan: false },
    run: async (input, ctx) => {
      const split = splitSchedule(input as ToolArgs);
      if (split.schedule !== undefined && !acceptsSchedule) throw scheduleNotSupported(name);
      return handler(checkArgs(split.args), ctx);
    },
  });
  const tool: ToolInfo = Object.freeze({ name, description, inputSchema: schema, acceptsSchedule });
  const definition: ToolDefinition<A, O> = Object.freeze({
    ...task,
    tool,
    checkArgs,
    prepareArgs: (args: unknown, options: PrepareToolArgsOptions) =>
      prepareToolArgs(definition, args, options),
  });
  return definition;
}

/** True for a definition made by defineTool (a task with tool metadata and an argument check). */
export function isTool(value: unknown): value is ToolDefinition {
  return (
    isRecord(value) &&
    value.type === 'task' &&
    isRecord(value.tool) &&
    typeof (value as { checkArgs?: unknown }).checkArgs === 'function'
  );
}
