import type { ModelMessage } from 'ai';
import { describe, ValidationError } from '../core/index.ts';
import { CHECKPOINT_VERSION, type CheckpointState } from './checkpoint-state.ts';
import { analyzeToolPairing } from './conversation-exchanges.ts';

/*
 * Resume validation (protocol 003). A checkpoint is data from storage: it may be missing, a
 * corrupt JSON string, from another version or half-written by a bug. This never throws on it;
 * it says why it cannot be used so the caller records an event and starts fresh. Version rule:
 * same major is compatible; a newer minor is read with a warning (fields it added are dropped);
 * another major, or anything that is not "major.minor", is refused.
 */

export type CheckpointValidation =
  | { ok: true; state: CheckpointState; warnings: string[] }
  | { ok: false; reason: string; field: string };

export interface ValidateCheckpointOptions {
  /** The version this reader understands. @default '1.0' */
  currentVersion?: string;
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const VERSION_PATTERN = /^(\d+)\.(\d+)(?:\.\d+)?$/;

export function validateCheckpoint(
  input: unknown,
  options: ValidateCheckpointOptions = {},
): CheckpointValidation {
  const current = parseVersion(options.currentVersion ?? CHECKPOINT_VERSION);
  if (!current)
    throw new ValidationError('currentVersion', 'a "major.minor" version', options.currentVersion, {
      code: 'INVALID_OPTION',
    });
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (err) {
      return invalid('state', `is not valid JSON (${(err as Error).message})`);
    }
  }
  if (value === undefined || value === null) return invalid('state', 'is missing');
  if (typeof value !== 'object' || Array.isArray(value))
    return invalid('state', `must be an object, got ${describe(value)}`);
  const s = value as Record<string, unknown>;
  const warnings: string[] = [];

  const version = typeof s.version === 'string' ? parseVersion(s.version) : undefined;
  if (!version)
    return invalid('version', `must be a "major.minor" version string, got ${describe(s.version)}`);
  if (version.major !== current.major)
    return invalid(
      'version',
      `${s.version} is not compatible with ${current.text} (different major version)`,
    );
  if (version.minor > current.minor)
    warnings.push(
      `checkpoint version ${s.version} is newer than ${current.text}; fields it added are ignored`,
    );

  if (!Array.isArray(s.conversationHistory))
    return invalid('conversationHistory', `must be an array, got ${describe(s.conversationHistory)}`);
  const historyProblem = checkHistory(s.conversationHistory);
  if (historyProblem) return historyProblem;

  for (const field of ['turnCount', 'toolCallCount'] as const) {
    if (!(Number.isSafeInteger(s[field]) && (s[field] as number) >= 0))
      return invalid(field, `must be a non-negative integer, got ${describe(s[field])}`);
  }
  if (!(typeof s.elapsedMs === 'number' && Number.isFinite(s.elapsedMs) && s.elapsedMs >= 0))
    return invalid('elapsedMs', `must be a non-negative number, got ${describe(s.elapsedMs)}`);
  if (!(typeof s.checkpointedAt === 'string' && Number.isFinite(Date.parse(s.checkpointedAt))))
    return invalid('checkpointedAt', `must be an ISO timestamp, got ${describe(s.checkpointedAt)}`);

  let contextSummary: Record<string, unknown> = {};
  if (s.contextSummary === undefined) warnings.push('contextSummary was missing; using {}');
  else if (
    typeof s.contextSummary !== 'object' ||
    s.contextSummary === null ||
    Array.isArray(s.contextSummary)
  )
    return invalid('contextSummary', `must be an object, got ${describe(s.contextSummary)}`);
  else contextSummary = s.contextSummary as Record<string, unknown>;

  return {
    ok: true,
    warnings,
    state: {
      conversationHistory: [...(s.conversationHistory as ModelMessage[])],
      turnCount: s.turnCount as number,
      toolCallCount: s.toolCallCount as number,
      contextSummary,
      checkpointedAt: s.checkpointedAt,
      elapsedMs: s.elapsedMs,
      version: s.version as string,
    },
  };
}

function checkHistory(history: unknown[]): { ok: false; reason: string; field: string } | undefined {
  for (let i = 0; i < history.length; i++) {
    const m = history[i];
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      return invalid(`conversationHistory[${i}]`, `must be a message object, got ${describe(m)}`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role))
      return invalid(
        `conversationHistory[${i}].role`,
        `must be system, user, assistant or tool, got ${describe(role)}`,
      );
    if (
      !(typeof content === 'string' || Array.isArray(content)) ||
      (role === 'tool' && !Array.isArray(content))
    )
      return invalid(
        `conversationHistory[${i}].content`,
        `must be a string or an array of parts, got ${describe(content)}`,
      );
  }
  // A history with half a tool exchange is rejected by providers; resuming it would only fail later.
  const pairing = analyzeToolPairing(history);
  const dangling = pairing.danglingCalls[0];
  if (dangling)
    return invalid(
      `conversationHistory[${dangling.index}]`,
      `has tool call ${JSON.stringify(dangling.toolCallId)} (${dangling.toolName}) with no result`,
    );
  const orphan = pairing.orphanResults[0];
  if (orphan)
    return invalid(
      `conversationHistory[${orphan.index}]`,
      `has a result for tool call ${JSON.stringify(orphan.toolCallId)} that was never made`,
    );
  return undefined;
}

function parseVersion(text: string): { major: number; minor: number; text: string } | undefined {
  const m = VERSION_PATTERN.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), text } : undefined;
}

function invalid(field: string, problem: string): { ok: false; reason: string; field: string } {
  return { ok: false, field, reason: `checkpoint ${field} ${problem}` };
}
