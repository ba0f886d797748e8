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
 */
export async function runModelTurn(args: {
  options: AgentLoopOptions;
  history: readonly ModelMessage[];
  tools: ToolSet | undefined;
  signal: AbortSignal;
  maxRetries: number;
}): Promise<ModelReply> {
  const { options, history, tools, signal, maxRetries } = args;
  const { generateText } = aiSdk();
  const result = await raceWithSignal(
    generateText({
      ...options.callSettings,
      model: options.model,
      ...(options.system === undefined ? {} : { system: options.system }),
      ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
      messages: [...history],
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
