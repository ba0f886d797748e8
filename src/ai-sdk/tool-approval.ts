/**
 * The AI SDK's tool approval (ai 6: a tool with `needsApproval`) answered through Baton. A
 * generation that wants to run such a tool stops with `tool-approval-request` parts; each becomes a
 * durable approve / deny decision on the run (`ctx.requestApproval`, keyed by the tool call id, so a
 * replay after a crash asks nothing twice), answered by a person (`baton decide`, the HTTP API, MCP,
 * the dashboard) or, past the decision timeout, by `onTimeout`. The answers come back as the `tool`
 * message of `tool-approval-response` parts to append before the next `generateText` /
 * `streamText` call, which then runs the approved tools and tells the model about the denied ones.
 */
import type { ToolModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import type { ApprovalAnswer, TaskContext } from '../runtime/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

export interface ToolApprovalOptions {
  /** How long a question waits for a person; without it, until someone answers. */
  timeout?: Duration;
  /** The answer once `timeout` passes. @default 'deny' */
  onTimeout?: 'approve' | 'deny';
  /** The question a person reads. @default `Approve <tool>(<input as JSON>)?` */
  message?: (call: { toolName: string; input: unknown; toolCallId: string }) => string;
}

/** The part a generation's `content` holds for a tool call waiting for approval. */
interface ApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown };
}

function isApprovalRequest(p: unknown): p is ApprovalRequestPart {
  if (typeof p !== 'object' || p === null) return false;
  const r = p as Partial<ApprovalRequestPart>;
  return (
    r.type === 'tool-approval-request' &&
    typeof r.approvalId === 'string' &&
    typeof r.toolCall?.toolCallId === 'string' &&
    typeof r.toolCall.toolName === 'string'
  );
}

/** At most this much of a tool's input is shown in the default question. */
const SHOWN_INPUT = 500;

function defaultMessage(call: { toolName: string; input: unknown }): string {
  let input = JSON.stringify(call.input) ?? 'undefined';
  if (input.length > SHOWN_INPUT) input = `${input.slice(0, SHOWN_INPUT)}…`;
  return `Approve ${call.toolName}(${input})?`;
}

function reasonOf(a: ApprovalAnswer): string | undefined {
  if (a.reason !== undefined) return a.reason;
  if (a.timedOut)
    return `no answer before the decision timeout (${a.approved ? 'approved' : 'denied'} by policy)`;
  return a.approved ? undefined : `denied by ${a.by}`;
}

/**
 * Asks for every approval a generation's `content` requests (one question at a time, in order)
 * and returns the `tool` message answering them — undefined when none was requested.
 *
 *   const r = await generateText({ model, tools, messages });
 *   messages.push(...r.response.messages);
 *   const answers = await approveToolCalls(ctx, r.content, { timeout: '1h' });
 *   if (answers) messages.push(answers);   // and generate again
 */
export async function approveToolCalls(
  ctx: TaskContext,
  content: readonly unknown[],
  options: ToolApprovalOptions = {},
): Promise<ToolModelMessage | undefined> {
  if (!Array.isArray(content))
    throw new ValidationError('content', "a generation's content parts (result.content)", content, {
      code: 'INVALID_INPUT',
    });
  if (options.timeout !== undefined) parseDuration(options.timeout, 'options.timeout');
  const requests = content.filter(isApprovalRequest);
  if (requests.length === 0) return undefined;
  const parts: ToolModelMessage['content'] = [];
  for (const r of requests) {
    const call = r.toolCall;
    const answer = await ctx.requestApproval({
      key: `ai:${call.toolCallId}`,
      message: (options.message ?? defaultMessage)(call),
      ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
      ...(options.onTimeout !== undefined ? { onTimeout: options.onTimeout } : {}),
    });
    const reason = reasonOf(answer);
    parts.push({
      type: 'tool-approval-response',
      approvalId: r.approvalId,
      approved: answer.approved,
      ...(reason !== undefined ? { reason } : {}),
    });
  }
  return { role: 'tool', content: parts };
}
