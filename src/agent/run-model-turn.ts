import type { ModelMessage, ToolSet } from 'ai';
import { raceWithSignal } from './abortable.ts';
import type { ProposedToolCall } from './agent-tools.ts';
import { aiSdk } from './ai-sdk.ts';
import type { AgentLoopOptions } from './loop-options.ts';

export interface ModelReply {
  /** The assistant message(s) of this turn (text and tool calls), ready to append to history. */
  messages: ModelMessage[];
  /** Tool calls the loop must answer (provider-executed ones are answered by the provider). */
  toolCalls: ProposedToolCall[];
  text: string;
  finishReason: string;
}

/**
 * One model call: a single `generateText` step whose tools have no `execute`, so the SDK stops
 * after the model proposes calls and the loop runs them itself. The SDK answers unknown tools and
 * invalid inputs with a tool message of its own; that is dropped here because the loop builds one
 * tool message for all of the turn's calls.
 *
 * The SDK checks every message it is given against its zod schemas on every call, so a turn cost
 * grew with the conversation: 1.2 ms of CPU a turn at 10 turns, 4.8 at 50, 8.9 at 100, 87 % of it
 * zod and the garbage it makes — all in one go on the event loop, ahead of other jobs' deadlines.
 * The first `validated` messages were checked by an earlier call of this invocation, or by role
 * when a checkpoint was restored (check-messages.ts), and are never changed after, so only the
 * rest (at least the last message) is passed as `messages`, checked as before, and the whole history
 * goes to the model through `prepareStep`, which the SDK does not re-check. A conversation whose
 * last message answers tool approvals is passed whole: the SDK looks for their requests in it.
 */
export async function runModelTurn(args: {
  options: AgentLoopOptions;
  history: readonly ModelMessage[];
  /** Leading messages of `history` an earlier call already had the SDK check. */
  validated: number;
  tools: ToolSet | undefined;
  signal: AbortSignal;
  maxRetries: number;
}): Promise<ModelReply> {
  const { options, history, validated, tools, signal, maxRetries } = args;
  const { generateText } = aiSdk();
  const whole = [...history];
  // At least the last message goes through the SDK's own check (it needs a non-empty `messages`).
  const tail =
    validated > 0 && !answersApprovals(history.at(-1))
      ? history.slice(Math.min(validated, history.length - 1))
      : undefined;
  const result = await raceWithSignal(
    generateText({
      ...options.callSettings,
      model: options.model,
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
      ...(tail ? { messages: tail, prepareStep: () => ({ messages: whole }) } : { messages: whole }),
      tools,
      maxRetries,
      abortSignal: signal,
    }),
    signal,
  );
  const toolCalls: ProposedToolCall[] = [];
  for (const call of result.toolCalls) {
    if (call.providerExecuted) continue;
    const { invalid, error } = call as { invalid?: boolean; error?: unknown };
    toolCalls.push({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input: call.input,
      ...(invalid ? { invalid, error } : {}),
    });
  }
  return {
    messages: result.response.messages.filter((m) => m.role === 'assistant'),
    toolCalls,
    text: result.text,
    finishReason: result.finishReason,
  };
}

/** The message answers tool approval requests (the SDK then acts on them before the model call). */
function answersApprovals(message: ModelMessage | undefined): boolean {
  return (
    message?.role === 'tool' &&
    message.content.some((part) => (part as { type: string }).type === 'tool-approval-response')
  );
}
