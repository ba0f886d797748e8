import type { ModelMessage } from 'ai';
import { toolPartsOf } from './conversation-exchanges.ts';

/**
 * The final answer a saved conversation already ends with, or undefined when the job still has
 * turns to make. The loop only ever saves whole turns, and a turn with tool calls of its own ends
 * with their tool message, so a history whose last message is the assistant's with no call left
 * unanswered in it (provider-executed calls carry their result inline) is a finished job: its
 * 'final' checkpoint committed but the run did not (the invocation's deadline, a lost lease or a
 * crash came between the two). Protocol 003: "Completed job → Returns cached results".
 */
export function finalAnswerOf(history: readonly ModelMessage[]): string | undefined {
  const last = history.at(-1);
  if (last?.role !== 'assistant') return undefined;
  const parts = toolPartsOf(last);
  const answered = new Set(parts.filter((p) => p.kind === 'result').map((p) => p.toolCallId));
  if (parts.some((p) => p.kind === 'call' && !answered.has(p.toolCallId))) return undefined;
  if (typeof last.content === 'string') return last.content;
  return last.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
