import type { FlexibleSchema, JSONSchema7, ToolResultPart, ToolSet } from 'ai';
import type { Clock } from '../time/index.ts';
import { raceWithSignal } from './abortable.ts';
import type { EmitAgentEvent } from './agent-events.ts';
import { aiSdk } from './ai-sdk.ts';

/**
 * A tool the loop executes itself (the model only proposes calls), so that every call is counted,
 * gets the invocation's AbortSignal, and has its result appended as a proper tool message.
 */
export interface AgentTool<Input = unknown, Output = unknown> {
  description?: string;
  /** A zod (or other Standard Schema) schema, an AI SDK `jsonSchema(...)`, or a plain JSON schema. */
  inputSchema: FlexibleSchema<Input> | JSONSchema7;
  /** Gets the input already validated against `inputSchema`; its output must be JSON-serializable. */
  execute(input: Input, context: AgentToolContext): Promise<Output> | Output;
}

/** What an agent tool handler gets besides its arguments: the abort signal and the id of the model's tool call. */
export interface AgentToolContext {
  /** Aborts at the invocation's hard deadline or when the caller cancels. */
  signal: AbortSignal;
  toolCallId: string;
}

/** Identity helper that infers `Input` from a zod schema. */
export function agentTool<Input, Output>(definition: AgentTool<Input, Output>): AgentTool<Input, Output> {
  return definition;
}

/** The SDK view of the tools: schemas only, no `execute`, so `generateText` never runs them. */
export function toSdkTools(tools: Record<string, AgentTool>): ToolSet {
  const set: ToolSet = {};
  for (const [name, t] of Object.entries(tools)) set[name] = sdkToolOf(t);
  return set;
}

/**
 * Each tool's SDK form, made once per tool. The SDK turns a zod input schema into JSON Schema
 * through a wrapper that keeps the result, but it wraps a bare zod schema anew on every
 * `generateText` call: handing it the wrapper keeps one conversion per tool instead of one per tool
 * per model call (`z.toJSONSchema` was ~2 % of a resumed invocation's CPU before its first call).
 */
const sdkTools = new WeakMap<AgentTool, ToolSet[string]>();

function sdkToolOf(t: AgentTool): ToolSet[string] {
  let made = sdkTools.get(t);
  if (!made) {
    const { asSchema, jsonSchema, tool } = aiSdk();
    made = tool({
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: isFlexibleSchema(t.inputSchema) ? asSchema(t.inputSchema) : jsonSchema(t.inputSchema),
    });
    sdkTools.set(t, made);
  }
  return made;
}

function isFlexibleSchema(schema: FlexibleSchema<unknown> | JSONSchema7): schema is FlexibleSchema<unknown> {
  if (typeof schema === 'function') return true;
  return (
    typeof schema === 'object' &&
    schema !== null &&
    ('~standard' in schema || Symbol.for('vercel.ai.schema') in schema)
  );
}

/** One tool call proposed by the model, as `generateText` parsed it. */
export interface ProposedToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** Set by the SDK when the tool is unknown or the input failed the schema. */
  invalid?: boolean;
  error?: unknown;
}

export interface ToolCallOutcome {
  part: ToolResultPart;
  status: 'completed' | 'failed' | 'aborted';
}

export const ABORTED_TOOL_MESSAGE =
  'Tool call aborted: the time budget of this invocation ran out before it finished. Call it again if still needed.';

/**
 * Runs the turn's tool calls in parallel. Every call gets a result part, also when the tool is
 * unknown, its input was invalid, it threw, or the signal aborted it, so the tool message always
 * pairs with the assistant message that made the calls.
 */
export async function executeToolCalls(
  calls: readonly ProposedToolCall[],
  tools: Record<string, AgentTool>,
  context: { signal: AbortSignal; clock: Clock; turn: number; emit: EmitAgentEvent },
): Promise<ToolCallOutcome[]> {
  const { signal, clock, turn, emit } = context;
  for (const call of calls) {
    emit({
      type: 'tool:called',
      turn,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: call.input,
    });
  }
  return Promise.all(
    calls.map(async (call): Promise<ToolCallOutcome> => {
      const started = clock.monotonic();
      const base = { turn, toolCallId: call.toolCallId, toolName: call.toolName };
      const result = (output: ToolResultPart['output']): ToolResultPart => ({
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output,
      });
      const t = tools[call.toolName];
      if (call.invalid || !t) {
        const error = errorText(call.error ?? `unknown tool ${call.toolName}`);
        emit({ type: 'tool:failed', ...base, error, aborted: false, durationMs: 0 });
        return { part: result({ type: 'error-text', value: error }), status: 'failed' };
      }
      try {
        const value = await raceWithSignal(
          Promise.resolve().then(() => t.execute(call.input, { signal, toolCallId: call.toolCallId })),
          signal,
        );
        const output = toToolOutput(value);
        emit({ type: 'tool:completed', ...base, durationMs: clock.monotonic() - started });
        return { part: result(output), status: 'completed' };
      } catch (err) {
        const aborted = signal.aborted;
        const error = aborted ? ABORTED_TOOL_MESSAGE : errorText(err);
        emit({ type: 'tool:failed', ...base, error, aborted, durationMs: clock.monotonic() - started });
        return { part: result({ type: 'error-text', value: error }), status: aborted ? 'aborted' : 'failed' };
      }
    }),
  );
}

/** Strings go to the model as text; anything else as JSON, normalized now so checkpoints match. */
export function toToolOutput(value: unknown): ToolResultPart['output'] {
  if (typeof value === 'string') return { type: 'text', value };
  const text = JSON.stringify(value);
  // JSON.stringify throws on cycles and BigInt; the caller turns that into an error result.
  return { type: 'json', value: text === undefined ? null : JSON.parse(text) };
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
}
