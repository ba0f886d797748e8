import type { ModelMessage } from 'ai';

/*
 * What an "exchange" is. Providers reject a conversation in which an assistant tool call has no
 * result, or a tool result has no call before it. So the unit that compression keeps or drops is
 * not one message: it is a run of messages that may not be cut apart. A cut between message i-1
 * and message i is safe when message i is not a `tool` message (results always stay with the
 * assistant message before them) and no tool call at or before i-1 has its result at or after i.
 * Exchanges are the runs between safe cuts. In an agent loop that makes one exchange per user
 * message, one per assistant message with its tool results, and one per final answer.
 * The pairing is by toolCallId, not by adjacency, so results that arrive a few messages later
 * still hold their call's exchange together.
 */

interface ToolPart {
  kind: 'call' | 'result';
  toolCallId: string;
  toolName: string;
}

/** The tool-call and tool-result parts of one message, read defensively (checkpoints are data). */
export function toolPartsOf(message: unknown): ToolPart[] {
  if (typeof message !== 'object' || message === null) return [];
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (!Array.isArray(content) || (role !== 'assistant' && role !== 'tool')) return [];
  const out: ToolPart[] = [];
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue;
    const p = part as { type?: unknown; toolCallId?: unknown; toolName?: unknown };
    if (typeof p.toolCallId !== 'string') continue;
    const toolName = typeof p.toolName === 'string' ? p.toolName : '';
    // Provider-executed tools put their result in the assistant message itself.
    if (p.type === 'tool-call' && role === 'assistant')
      out.push({ kind: 'call', toolCallId: p.toolCallId, toolName });
    else if (p.type === 'tool-result') out.push({ kind: 'result', toolCallId: p.toolCallId, toolName });
  }
  return out;
}

export interface ToolPairing {
  /** Tool calls with no result anywhere after them. */
  danglingCalls: Array<{ toolCallId: string; toolName: string; index: number }>;
  /** Tool results with no call before them. */
  orphanResults: Array<{ toolCallId: string; toolName: string; index: number }>;
  /** For each call that has a result: the message indexes of the call and of its last result. */
  pairs: Array<{ callIndex: number; resultIndex: number }>;
}

export function analyzeToolPairing(history: readonly unknown[]): ToolPairing {
  const calls = new Map<string, { index: number; toolName: string }>();
  const lastResult = new Map<string, number>();
  const orphanResults: ToolPairing['orphanResults'] = [];
  history.forEach((message, index) => {
    for (const part of toolPartsOf(message)) {
      if (part.kind === 'call') calls.set(part.toolCallId, { index, toolName: part.toolName });
      else if (calls.has(part.toolCallId)) lastResult.set(part.toolCallId, index);
      else orphanResults.push({ toolCallId: part.toolCallId, toolName: part.toolName, index });
    }
  });
  const danglingCalls: ToolPairing['danglingCalls'] = [];
  const pairs: ToolPairing['pairs'] = [];
  for (const [toolCallId, call] of calls) {
    const resultIndex = lastResult.get(toolCallId);
    if (resultIndex === undefined)
      danglingCalls.push({ toolCallId, toolName: call.toolName, index: call.index });
    else pairs.push({ callIndex: call.index, resultIndex });
  }
  return { danglingCalls, orphanResults, pairs };
}

/** Splits a history into exchanges (see the note at the top of this file). */
export function groupExchanges<M extends ModelMessage>(history: readonly M[]): M[][] {
  const n = history.length;
  // open[i] > 0 means some call before message i has its result at or after i: no cut there.
  const open = new Array<number>(n + 1).fill(0);
  for (const { callIndex, resultIndex } of analyzeToolPairing(history).pairs) {
    if (resultIndex <= callIndex) continue;
    open[callIndex + 1] = (open[callIndex + 1] ?? 0) + 1;
    open[resultIndex + 1] = (open[resultIndex + 1] ?? 0) - 1;
  }
  const groups: M[][] = [];
  let depth = 0;
  let current: M[] = [];
  for (let i = 0; i < n; i++) {
    depth += open[i] ?? 0;
    const message = history[i] as M;
    if (i > 0 && depth === 0 && message.role !== 'tool') {
      groups.push(current);
      current = [];
    }
    current.push(message);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
