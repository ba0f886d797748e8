/**
 * Escalation (protocol 001, "Escalation Path"). When retries are exhausted — or fast mode accepts a
 * partial result — the attempt builds a decision request in the protocol's wording. Unattended runs
 * (the default) have it answered at once by the task's escalation policy. Runs that ask a human wait
 * durably in `waiting: decision` (a restart does not lose the question) until someone answers —
 * the CLI prompt, `baton decide`, the HTTP API or code — or the optional decision timeout lets the
 * policy answer. Every answer becomes one transition, guarded so two answers cannot both apply.
 */
import {
  type Answerer,
  answererLabel,
  assertJsonDepth,
  BatonError,
  buildDecisionRequest,
  type DecisionAnswer,
  type DecisionRequest,
  decideByPolicy,
  type EscalationMenu,
  type EscalationPolicy,
  type NewEvent,
  newEvent,
  resolveDecision,
  type SerializedError,
  serializeError,
  validateDecision,
} from '../core/index.ts';
import type { RunPatch, RunRecord, TransitionGuard } from '../store/index.ts';
import { answerApproval, type PendingApproval } from './approval.ts';
import type { Engine } from './engine.ts';
import { type AttemptSummary, attemptEndEvent, attemptLog, replayEvents, ttlOf } from './finish-attempt.ts';
import { type AnsweredDecision, type RunMeta, runMetaOf } from './run-meta.ts';
import { type RunOptions, runOptionsOf } from './run-options.ts';
import { deliversToolResult, resultDelivery } from './scheduled-delivery.ts';

/** What a run waiting for a decision keeps in its meta. */
export interface PendingDecision {
  request: DecisionRequest;
  reason: string;
  /** The attempt's result to use if the answer is "continue with partial results". */
  result: unknown;
  attempt: number;
  timerId?: string;
  /** The error that ended the last attempt (what an unattended abandon fails with). */
  error?: SerializedError;
  /** The policy that answers if nobody does (the same the unattended path would use). */
  policy?: EscalationPolicy;
  /** When the question was asked, and when the policy answers if nobody does (epoch ms). */
  askedAt?: number;
  timeoutAt?: number;
  /** Set for a question the body asked (ctx.requestApproval), answered through its signal. */
  approval?: PendingApproval;
}

/** A question a run waits on: the run's own, or one of a flow's steps'. */
export interface OpenDecision {
  runId: string;
  stepId: string | null;
  request: DecisionRequest;
}

function questionOf(run: RunRecord): OpenDecision | undefined {
  const pending = runMetaOf(run).decision;
  if (run.status !== 'waiting' || run.waitReason !== 'decision' || !pending) return undefined;
  return { runId: run.id, stepId: run.stepId, request: pending.request };
}

/** The questions open on a run: its own, or for a flow, those its steps wait on. */
export async function openDecisions(engine: Engine, run: RunRecord): Promise<OpenDecision[]> {
  const own = questionOf(run);
  if (own) return [own];
  if (run.kind !== 'flow') return [];
  const waiting = await engine.store.listRuns({ parentId: run.id, status: 'waiting', limit: 10_000 });
  return waiting.map(questionOf).filter((d): d is OpenDecision => d !== undefined);
}

export interface EscalateInput {
  s: AttemptSummary;
  reason: string;
  menu: EscalationMenu;
  error: unknown;
  timedOut: boolean;
  findings: unknown[];
  result: unknown;
}

function wantsHuman(options: RunOptions, askByDefault: boolean): boolean {
  const { escalation } = options;
  return escalation === undefined ? askByDefault : escalation === 'ask';
}

export async function escalate(engine: Engine, e: EscalateInput): Promise<RunRecord> {
  const { s } = e;
  const now = engine.clock.now();
  const request = buildDecisionRequest({
    menu: e.menu,
    attempts: s.failures + 1,
    // An attempt refused because the budget was already spent had no timeout of its own.
    timeoutMs: Math.max(1, s.timeoutMs),
    totalMs: now - (s.run.startedAt ?? s.run.createdAt),
    findings: e.findings.length,
    ...(s.task.escalation.expectedFindings ? { expectedFindings: s.task.escalation.expectedFindings } : {}),
    ...(s.mode !== undefined ? { mode: s.mode } : {}),
    ...(s.policy.modeLabel !== undefined ? { modeLabel: s.policy.modeLabel } : {}),
    modeIds: s.policy.modeIds,
    taskName: s.task.name,
    ...(s.task.escalation.wording ? { wording: s.task.escalation.wording } : {}),
  });
  const pending: PendingDecision = {
    request,
    reason: e.reason,
    result: e.result,
    attempt: s.run.attempt,
    error: serializeError(e.error),
    policy: policyFor(s.task.escalation.policy, e),
  };
  const ended: NewEvent[] = [
    ...replayEvents(s),
    attemptEndEvent(engine, s, e.error, e.timedOut, e.findings.length),
  ];
  const baseMeta = {
    failures: s.failures + 1,
    ...attemptLog(s, e.timedOut),
    lastError: serializeError(e.error),
  };

  if (!wantsHuman(s.options, s.task.escalation.ask)) {
    const answer = decideByPolicy(request, pending.policy);
    const requested = newEvent(s.run.id, 'decision:requested', { request: { ...request }, reason: e.reason });
    return applyDecision(
      engine,
      s.run,
      pending,
      answer,
      { kind: 'policy', trigger: 'unattended' },
      { fence: s.fence },
      [...ended, requested],
      baseMeta,
      s,
    );
  }
  const timeoutMs = s.task.escalation.decisionTimeoutMs;
  pending.askedAt = now;
  if (timeoutMs !== null) {
    // Added first: if the process dies before the transition, the timer finds no question and does nothing.
    pending.timerId = `decision:${s.run.id}:${s.run.attempt}`;
    pending.timeoutAt = now + timeoutMs;
    await engine.store.addTimer({
      id: pending.timerId,
      runId: s.run.id,
      kind: 'decision-timeout',
      dueAt: now + timeoutMs,
      payload: { runId: s.run.id, attempt: s.run.attempt },
      createdAt: now,
    });
  }
  return engine.store.transition(
    s.run.id,
    { status: 'waiting', waitReason: 'decision', meta: { ...baseMeta, decision: pending } },
    [
      ...ended,
      newEvent(s.run.id, 'decision:requested', {
        request: { ...request },
        reason: e.reason,
        ...(timeoutMs !== null ? { timeoutAt: new Date(now + timeoutMs).toISOString() } : {}),
      }),
      newEvent(s.run.id, 'run:waiting', { reason: 'decision', detail: request.message.split('\n')[0] ?? '' }),
    ],
    { fence: s.fence },
  );
}

/** A failure without findings is not "skipped" by default: nothing was found and something broke. */
function policyFor(policy: EscalationPolicy, e: EscalateInput): EscalationPolicy {
  if (e.timedOut || e.findings.length > 0) return policy;
  return { ...policy, otherwise: ['abandon', ...policy.otherwise.filter((c) => c !== 'abandon')] };
}

/** Kept in a run's meta when a person's answer ended it (null after a resume). */
export interface EndedByAnswer {
  choice: string;
  by: string;
  /** ISO 8601. */
  at: string;
}

/** The person's answer that ended a run, if one did. */
export function endedByAnswer(run: RunRecord): EndedByAnswer | undefined {
  return runMetaOf(run).endedBy;
}

/** Turns an answer into the run's next state, in one guarded transition (with the flow on abandon). */
async function applyDecision(
  engine: Engine,
  run: RunRecord,
  pending: PendingDecision,
  answer: DecisionAnswer,
  answerer: Answerer,
  guard: TransitionGuard,
  events: NewEvent[] = [],
  meta: Record<string, unknown> = {},
  /** The run's options and meta when the caller (an attempt that just ended) has them decoded. */
  decoded: { options: RunOptions; meta: RunMeta } = { options: runOptionsOf(run), meta: runMetaOf(run) },
): Promise<RunRecord> {
  const outcome = resolveDecision(pending.request, answer);
  const by = answererLabel(answerer);
  const byPolicy = answerer.kind === 'policy';
  const now = engine.clock.now();
  const task = engine.tasks.get(run.name);
  const made = newEvent(run.id, 'decision:made', {
    answer: { ...answer },
    by,
    answeredBy: answerer,
    action: outcome.action,
  });
  const history: AnsweredDecision[] = [
    ...decoded.meta.decisions,
    { answer, by, answeredBy: answerer, at: new Date(now).toISOString(), reason: pending.reason },
  ];
  const base = { ...meta, decision: null, decisions: history };
  // A person's answer that ends the run is remembered, so a later resume says so instead of
  // starting the work over (resume-run.ts); a policy's answer is not a person's choice.
  const endedBy: EndedByAnswer | null = byPolicy
    ? null
    : { choice: answer.choice, by, at: new Date(now).toISOString() };
  const ended = (
    status: 'succeeded' | 'partial' | 'failed',
    extra: RunPatch,
    end: NewEvent,
  ): Promise<RunRecord> => {
    // A scheduled tool's outcome is delivered now: nothing is left to wait for.
    const delivery = deliversToolResult(run, decoded.options)
      ? resultDelivery(
          run,
          { status, output: extra.output, error: extra.error ?? null },
          now,
          engine.delivery.channels,
          engine.logger,
        )
      : undefined;
    return engine.store.transition(
      run.id,
      {
        status,
        waitReason: null,
        finishedAt: now,
        expiresAt: now + ttlOf(engine, run, task, decoded.options),
        ...extra,
        meta: { ...extra.meta, endedBy },
      },
      [...events, made, ...(delivery?.events ?? []), end],
      guard,
      delivery?.effects,
    );
  };
  switch (outcome.action) {
    case 'retry':
    case 'restart':
      return engine.store.transition(
        run.id,
        {
          status: 'queued',
          waitReason: null,
          wakeAt: null,
          meta:
            outcome.action === 'retry'
              ? { ...base, timeoutOverrideMs: outcome.timeoutMs }
              : { ...base, modeOverride: outcome.mode, failures: 0, timeoutOverrideMs: null },
        },
        [...events, made, newEvent(run.id, 'run:queued', { reason: 'resumed' })],
        guard,
      );
    case 'finish': {
      const durationMs = now - (run.startedAt ?? run.createdAt);
      if (outcome.finalStatus === 'completed')
        return ended(
          'succeeded',
          { output: outcome.input ?? null, meta: base },
          newEvent(run.id, 'run:succeeded', { durationMs }),
        );
      const skipped = outcome.finalStatus === 'skipped';
      const output = skipped
        ? { skipped: true, research_complete: false, reason: pending.request.message.split('\n')[0] }
        : pending.result;
      return ended(
        'partial',
        { output, meta: { ...base, incomplete: true, researchComplete: false, skipped } },
        newEvent(run.id, 'run:partial', { durationMs }),
      );
    }
    case 'abandon': {
      // The policy gives up with the error that ended the last attempt (a tool's timeout stays a
      // TIMEOUT); a person's "abandon" is recorded as theirs.
      const error =
        byPolicy && pending.error
          ? pending.error
          : serializeError(
              new BatonError(
                'NON_RETRIABLE',
                `abandoned after ${pending.request.attempts} attempt(s), decided by ${by}`,
                {
                  data: { reason: pending.reason },
                },
              ),
            );
      const step = await ended('failed', { error, meta: base }, newEvent(run.id, 'run:failed', { error }));
      // "Abandon planning session": when a person says so, the whole flow ends with its other steps.
      if (run.parentId && !byPolicy) {
        await engine.store
          .transition(
            run.parentId,
            { status: 'failed', error, finishedAt: now, expiresAt: now + engine.ttlMs, meta: { endedBy } },
            [newEvent(run.parentId, 'run:failed', { error })],
            { expectStatus: ['running'] },
          )
          .catch(() => undefined);
      }
      return step;
    }
  }
}

function normalizeAnswer(answer: unknown): unknown {
  return typeof answer === 'string' ? { choice: answer } : answer;
}

/** Answers the question a run is waiting on. Throws RUN_CONFLICT if it is not waiting for one. */
export async function decide(
  engine: Engine,
  runId: string,
  rawAnswer: unknown,
  by: string,
): Promise<RunRecord> {
  let run = await engine.store.getRun(runId);
  if (!run) throw new BatonError('RUN_NOT_FOUND', `no run with id ${runId}`, { data: { runId } });
  if (run.kind === 'flow' && !questionOf(run)) {
    // A flow's question is its step's: answer it through the flow when there is only one.
    const open = await openDecisions(engine, run);
    if (open.length > 1)
      throw new BatonError(
        'RUN_CONFLICT',
        `flow ${runId} has ${open.length} open questions; answer one of its steps: ${open.map((d) => d.runId).join(', ')}`,
        { data: { runId, steps: open.map((d) => d.runId) } },
      );
    const step = open[0] ? await engine.store.getRun(open[0].runId) : undefined;
    if (step) run = step;
  }
  const pending = runMetaOf(run).decision;
  if (run.status !== 'waiting' || run.waitReason !== 'decision' || !pending)
    throw new BatonError(
      'RUN_CONFLICT',
      `run ${run.id} is not waiting for a decision (it is ${run.status}${run.waitReason ? `: ${run.waitReason}` : ''})`,
      {
        data: { runId: run.id, status: run.status },
      },
    );
  if (pending.approval) return answerApproval(engine, run, pending.approval, rawAnswer, by);
  assertJsonDepth(rawAnswer, 'answer');
  const answer = validateDecision(pending.request, normalizeAnswer(rawAnswer));
  const next = await applyDecision(
    engine,
    run,
    pending,
    answer,
    { kind: 'person', name: by },
    { expectStatus: ['waiting'] },
  );
  if (pending.timerId) await engine.store.cancelTimers([pending.timerId]);
  return next;
}

/** The decision timeout: the policy answers if the question is still open. */
export async function decideOnTimeout(engine: Engine, runId: string, attempt: number): Promise<void> {
  const run = await engine.store.getRun(runId);
  const pending = run ? runMetaOf(run).decision : undefined;
  if (run?.status !== 'waiting' || run.waitReason !== 'decision' || !pending || pending.attempt !== attempt)
    return;
  const task = engine.tasks.get(run.name);
  const answer = decideByPolicy(pending.request, pending.policy ?? task?.escalation.policy);
  await applyDecision(
    engine,
    run,
    pending,
    answer,
    { kind: 'policy', trigger: 'decision_timeout' },
    {
      expectStatus: ['waiting'],
    },
  ).catch((err: unknown) => {
    // Someone answered in the meantime: theirs stands.
    if (!(err instanceof BatonError && err.code === 'RUN_CONFLICT')) throw err;
  });
}
