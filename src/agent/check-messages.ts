import { aiSdk } from './ai-sdk.ts';
import { type CheckpointValidation, validateCheckpoint } from './validate-checkpoint.ts';

/**
 * What a resume may start from: a valid checkpoint (validate-checkpoint.ts) whose every message the
 * AI SDK would also accept, so that the first model call need not check them again.
 */
export function validateResumable(input: unknown): CheckpointValidation {
  const check = validateCheckpoint(input);
  if (!check.ok) return check;
  const bad = firstRejectedMessage(check.state.conversationHistory);
  return bad ? { ok: false, field: `conversationHistory[${bad.index}]`, reason: bad.reason } : check;
}

/**
 * The first message the AI SDK's schema rejects, checked against the schema of its own role.
 *
 * `generateText` checks a conversation against the union of the four message schemas; zod then
 * builds an issue, with its message text, for every branch a message fails before the one it
 * matches, and that garbage was most of a resumed invocation's cost before its first model call
 * (0.6-1.0 ms for a 17-message history against 0.18-0.25 ms by role, same process). The role
 * decides the branch — only the role's schema can accept a message — so checking by role accepts
 * exactly what the union accepts.
 */
function firstRejectedMessage(messages: readonly unknown[]): { index: number; reason: string } | undefined {
  const sdk = aiSdk();
  const byRole = {
    system: sdk.systemModelMessageSchema,
    user: sdk.userModelMessageSchema,
    assistant: sdk.assistantModelMessageSchema,
    tool: sdk.toolModelMessageSchema,
  } as const;
  for (let index = 0; index < messages.length; index++) {
    const role = (messages[index] as { role?: unknown } | null)?.role;
    const schema =
      typeof role === 'string' && Object.hasOwn(byRole, role)
        ? byRole[role as keyof typeof byRole]
        : undefined;
    if (!schema) return { index, reason: `has no known role (${JSON.stringify(role) ?? 'none'})` };
    const result = schema.safeParse(messages[index]);
    if (!result.success) {
      const issue = result.error.issues[0];
      const at = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
      return {
        index,
        reason: `is not a ${role} message the AI SDK accepts${at}: ${issue?.message ?? 'invalid'}`,
      };
    }
  }
  return undefined;
}
