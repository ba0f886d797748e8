/**
 * Durable approvals (`ctx.requestApproval`): a question the task body asks a person — "may this
 * tool call run?" — with an approve / deny menu. It is a decision on the run like an escalation
 * (`waiting: decision`, the question in `meta.decision`), so every way of answering one answers it:
 * `baton.decide`, `baton decide`, `POST /runs/:id/decision`, MCP, the dashboard. Underneath it is a
 * `ctx.waitFor` on a signal private to the question: the answer is stored as that signal and the
 * run is queued in one guarded step; the replayed body reads it exactly once. The decision timeout
 * is the wait's timeout, after which the question's `onTimeout` (deny unless said) is the answer.
 */
import { createHash } from 'node:crypto';
import {
  type Answerer,
  type ApprovalChoice,
  answererOf,
  assertJsonDepth,
  BatonError,
  buildApprovalRequest,
  type DecisionRequest,
  newEvent,
  newId,
  ValidationError,
} from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import { parseDuration } from '../time/index.ts';
import type { Engine } from './engine.ts';
import { type AnsweredDecision, runMetaOf } from './run-meta.ts';
import type { ApprovalAnswer, ApprovalQuestion, WaitForResult } from './task-context.ts';

/** What a suspended approval keeps in the run's pending decision. */
export interface PendingApproval {
  /** The signal the answer is stored as (private to this question). */
  signal: string;
  onTimeout: ApprovalChoice;
}

export interface CheckedApproval {
  key: string;
  signal: string;
  request: DecisionRequest;
  timeoutMs: number | null;
  onTimeout: ApprovalChoice;
}

const MAX_REASON = 2_000;

export function checkApproval(q: ApprovalQuestion, taskName: string): CheckedApproval {
  if (typeof q !== 'object' || q === null)
    throw new ValidationError('ctx.requestApproval question', 'an object { key, message }', q, {
      code: 'INVALID_OPTION',
    });
  if (typeof q.key !== 'string' || q.key === '' || q.key.length > 200)
    throw new ValidationError('ctx.requestApproval key', 'a string of 1-200 characters', q.key, {
      code: 'INVALID_OPTION',
    });
  const onTimeout = q.onTimeout ?? 'deny';
  if (onTimeout !== 'approve' && onTimeout !== 'deny')
    throw new ValidationError('ctx.requestApproval onTimeout', '"approve" or "deny"', q.onTimeout, {
      code: 'INVALID_OPTION',
    });
  return {
    key: q.key,
    // Keys are the caller's (a tool call id may hold any character); the signal name is a digest.
    signal: `baton.approval.${createHash('sha256').update(q.key).digest('hex').slice(0, 32)}`,
    request: buildApprovalRequest({ message: q.message, taskName }),
    timeoutMs: q.timeout === undefined ? null : parseDuration(q.timeout, 'ctx.requestApproval timeout'),
    onTimeout,
  };
}

interface ApprovalPayload {
  choice: ApprovalChoice;
  by: string;
  reason?: string;
  at: number;
}

/** What the body gets: the answer read from the question's signal, or the timeout's default. */
export function approvalAnswer(r: WaitForResult<unknown>, onTimeout: ApprovalChoice): ApprovalAnswer {
  if (r.status === 'timeout')
    return {
      approved: onTimeout === 'approve',
      by: 'policy (decision timeout)',
      answeredBy: { kind: 'policy', trigger: 'decision_timeout' },
      at: r.timedOutAt,
      timedOut: true,
    };
  const p = r.payload as ApprovalPayload;
  return {
    approved: p.choice === 'approve',
    by: p.by,
    answeredBy: answererOf(p),
    at: p.at,
    timedOut: false,
    ...(p.reason !== undefined ? { reason: p.reason } : {}),
  };
}

/** `"approve"`, `"deny"` or `{ choice, reason? }`, checked. */
export function checkApprovalAnswer(raw: unknown): { choice: ApprovalChoice; reason?: string } {
  const a = typeof raw === 'string' ? { choice: raw } : raw;
  if (typeof a !== 'object' || a === null || Array.isArray(a))
    throw new ValidationError('answer', 'an object like { "choice": "approve" }', raw);
  const { choice, reason } = a as { choice?: unknown; reason?: unknown };
  if (choice !== 'approve' && choice !== 'deny')
    throw new ValidationError('answer.choice', 'one of "approve", "deny"', choice);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON))
    throw new ValidationError('answer.reason', `a string of at most ${MAX_REASON} characters`, reason);
  return { choice, ...(reason !== undefined ? { reason } : {}) };
}

/**
 * Answers an approval: the answer is stored as the question's signal, then one transition guarded
 * on `waiting` records `decision:made` and queues the run, so a second answer racing this one gets
 * RUN_CONFLICT. A crash between the two leaves the run waiting with the answer stored; answering
 * again queues it, and the replay reads the first answer (signals are read oldest first).
 */
export async function answerApproval(
  engine: Engine,
  run: RunRecord,
  pending: PendingApproval,
  raw: unknown,
  by: string,
): Promise<RunRecord> {
  assertJsonDepth(raw, 'answer');
  const answer = checkApprovalAnswer(raw);
  const now = engine.clock.now();
  const signalId = newId('sig', now);
  const payload: ApprovalPayload = { ...answer, by, at: now };
  const answeredBy: Answerer = { kind: 'person', name: by };
  await engine.store.addSignal({ id: signalId, runId: run.id, name: pending.signal, payload }, [
    newEvent(run.id, 'signal:received', { name: pending.signal, signalId }),
  ]);
  const history: AnsweredDecision[] = [
    ...runMetaOf(run).decisions,
    { answer, by, answeredBy, at: new Date(now).toISOString(), reason: 'approval' },
  ];
  let next: RunRecord;
  try {
    next = await engine.store.transition(
      run.id,
      { status: 'queued', waitReason: null, wakeAt: null, meta: { decision: null, decisions: history } },
      [
        newEvent(run.id, 'decision:made', {
          answer: { ...answer },
          by,
          answeredBy,
          action: answer.choice === 'approve' ? 'approved' : 'denied',
        }),
        newEvent(run.id, 'run:queued', { reason: 'woken' }),
      ],
      { expectStatus: ['waiting'] },
    );
  } catch (err) {
    if (err instanceof BatonError && err.code === 'RUN_CONFLICT')
      throw new BatonError(
        'RUN_CONFLICT',
        `run ${run.id} is no longer waiting for this approval (answered meanwhile)`,
        {
          data: { runId: run.id },
        },
      );
    throw err;
  }
  engine.offer([run.id]);
  return next;
}
