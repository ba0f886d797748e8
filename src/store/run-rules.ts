/**
 * The one flow engine both stores share. Moving a run through the state machine, advancing a flow
 * when a step ends, finishing it, cancelling the steps of an ended flow: these functions take the
 * rows as read inside the write's transaction and return what must change — row updates and events,
 * as data. They do no I/O. Each store reads the rows in its own way (Postgres locks them first),
 * renders the updates in its dialect (`dialect.ts`) and applies them in the same transaction.
 */
import {
  assertTransition,
  BatonError,
  decideFlow,
  flowTimeoutState,
  isTerminal,
  type NewEvent,
  newEvent,
  type RunStatus,
  serializeError,
} from '../core/index.ts';
import type { RunRecord } from './records.ts';
import { json } from './rows.ts';
import type { RunPatch, TransitionGuard } from './store.ts';

/** Runs that finish without a TTL of their own are kept this long. @default 24 h */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;

/** The columns of `runs` a transition or a flow may change. */
export type RunColumn =
  | 'status'
  | 'wait_reason'
  | 'wake_at'
  | 'output'
  | 'error'
  | 'finished_at'
  | 'expires_at'
  | 'input'
  | 'attempt'
  | 'meta'
  | 'updated_at'
  | 'lease_owner'
  | 'lease_expires_at';

/** One UPDATE of `runs`, as data: columns set in order, on one run or several. */
export interface RunUpdate {
  ids: readonly string[];
  set: ReadonlyArray<readonly [RunColumn, unknown]>;
  /** Only rows still in this status change (a step made ready must still be waiting). */
  ifStatus?: RunStatus;
}

/** What a whole write must do: updates applied in order, then these events appended. */
export interface RunWrites {
  updates: RunUpdate[];
  events: NewEvent[];
}

export interface EncodedPatch {
  set: Array<readonly [RunColumn, unknown]>;
  /** The patched fields as they read back from the row (JSON columns round-tripped). */
  fields: Partial<RunRecord>;
}

/** Serializes a patch outside the transaction: a value that is not JSON fails before anything is written. */
export function encodePatch(patch: RunPatch): EncodedPatch {
  const set: EncodedPatch['set'] = [];
  const fields: Partial<RunRecord> = {};
  const add = <K extends keyof RunRecord>(col: RunColumn, key: K, value: RunRecord[K]) => {
    set.push([col, value]);
    fields[key] = value;
  };
  // JSON columns: stored as text, and read back as the text parses (what a reader would get).
  const addJson = <K extends keyof RunRecord>(col: RunColumn, key: K, value: unknown) => {
    const text = json(value);
    set.push([col, text]);
    fields[key] = JSON.parse(text) as RunRecord[K];
  };
  if (patch.status !== undefined) add('status', 'status', patch.status);
  if (patch.waitReason !== undefined) add('wait_reason', 'waitReason', patch.waitReason);
  if (patch.wakeAt !== undefined) add('wake_at', 'wakeAt', patch.wakeAt);
  if (patch.output !== undefined) addJson('output', 'output', patch.output);
  if (patch.error === null) add('error', 'error', null);
  else if (patch.error !== undefined) addJson('error', 'error', patch.error);
  if (patch.finishedAt !== undefined) add('finished_at', 'finishedAt', patch.finishedAt);
  if (patch.expiresAt !== undefined) add('expires_at', 'expiresAt', patch.expiresAt);
  if (patch.input !== undefined) addJson('input', 'input', patch.input);
  if (patch.resetAttempts) add('attempt', 'attempt', 0);
  return { set, fields };
}

export interface TransitionPlan {
  update: RunUpdate;
  /** The run as it reads after the update (unless `reread`). */
  record: RunRecord;
  /** The run is a flow that just ended: its open steps are cancelled (`planCancelOpenSteps`). */
  cancelSteps: boolean;
  /** This flow advances in the same transaction (`planAdvance`). */
  advance: string | undefined;
  /** A flow's own row changes again through its steps: read it back after the cascade. */
  reread: boolean;
}

export function leaseLost(
  runId: string,
  token: number,
  row: { status: string; leaseToken: number; leaseOwner: string | null },
): BatonError {
  return new BatonError(
    'LEASE_LOST',
    `lease on run ${runId} is no longer held (token ${token}; the run is ${row.status} with token ${row.leaseToken}${row.leaseOwner ? ` held by ${row.leaseOwner}` : ''})`,
    { data: { runId, token, currentToken: row.leaseToken, status: row.status } },
  );
}

export function runNotFound(runId: string): BatonError {
  return new BatonError('RUN_NOT_FOUND', `no run with id ${runId}`, { data: { runId } });
}

/** Checks the guard against the run as read in the transaction and plans its update. */
export function planTransition(
  run: RunRecord | undefined,
  runId: string,
  patch: RunPatch,
  encoded: EncodedPatch,
  guard: TransitionGuard,
  now: number,
): TransitionPlan {
  if (!run) throw runNotFound(runId);
  const fence = guard.fence;
  if (fence && (run.status !== 'running' || run.leaseToken !== fence.token))
    throw leaseLost(runId, fence.token, run);
  if (guard.expectStatus && !guard.expectStatus.includes(run.status))
    throw new BatonError(
      'RUN_CONFLICT',
      `run ${runId} is ${run.status}${run.leaseOwner ? ` (held by ${run.leaseOwner})` : ''}, expected ${guard.expectStatus.join(' or ')}`,
      { data: { runId, status: run.status, holder: run.leaseOwner } },
    );
  const to = patch.status ?? run.status;
  if (to !== run.status) assertTransition(runId, run.status, to);
  const set: Array<readonly [RunColumn, unknown]> = [...encoded.set, ['updated_at', now]];
  const record: RunRecord = { ...run, ...encoded.fields, updatedAt: now };
  // Leaving `running` always drops the lease; the token stays, so the old attempt stays fenced off.
  if (patch.releaseLease || (run.status === 'running' && to !== 'running')) {
    set.push(['lease_owner', null], ['lease_expires_at', null]);
    record.leaseOwner = null;
    record.leaseExpiresAt = null;
  }
  if (patch.meta) {
    const meta = json({ ...run.meta, ...patch.meta });
    set.push(['meta', meta]);
    record.meta = JSON.parse(meta) as Record<string, unknown>;
  }
  const ended = to !== run.status && isTerminal(to);
  // A result held for delivery has finished executing: its dependents may start (see decideFlow).
  const heldForDelivery = to === 'waiting' && patch.waitReason === 'delivery';
  return {
    update: { ids: [runId], set },
    record,
    // A flow's open steps, and the open children a task started with ctx.invoke, end with it.
    cancelSteps: ended,
    advance: run.parentId && (ended || heldForDelivery) ? run.parentId : undefined,
    reread: ended && run.kind === 'flow',
  };
}

/** A flow that ends (cancelled, expired, failed by a decision) takes its unfinished steps with it. */
export function planCancelOpenSteps(
  flowId: string,
  flowStatus: RunStatus,
  openStepIds: readonly string[],
  now: number,
): RunWrites {
  if (openStepIds.length === 0) return { updates: [], events: [] };
  return {
    updates: [
      {
        ids: openStepIds,
        set: [
          ['status', 'cancelled'],
          ['wait_reason', null],
          ['wake_at', null],
          ['lease_owner', null],
          ['lease_expires_at', null],
          ['finished_at', now],
          ['updated_at', now],
        ],
      },
    ],
    events: openStepIds.map((id) =>
      newEvent(id, 'run:cancelled', { reason: `its flow ${flowId} ended ${flowStatus}` }),
    ),
  };
}

/** The statuses in which a flow's step is still open (cancelled when its flow ends). */
export const OPEN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting'];

export interface AdvancePlan extends RunWrites {
  /** The flow finished: its parent (if any) advances too. */
  finished: boolean;
}

/**
 * What a flow does after one of its steps changed: steps that can never run are cancelled with
 * DEPENDENCY_FAILED, steps whose dependencies are all usable are queued, the tracked timeout
 * state is kept on the flow, and a flow whose steps are all done finishes with their outputs.
 * `children` in creation order (the flow's output lists steps that way).
 */
export function planAdvance(
  flow: RunRecord,
  children: readonly RunRecord[],
  now: number,
  defaultTtlMs: number,
): AdvancePlan {
  const out: AdvancePlan = { updates: [], events: [], finished: false };
  if (isTerminal(flow.status)) return out;
  // A task's children are runs it started with ctx.invoke, not steps: one ending wakes the task.
  if (flow.kind === 'task') return { ...planParentWake(flow, now), finished: false };
  const decision = decideFlow(
    children.map((c) => ({
      stepId: c.stepId ?? c.id,
      status: c.status,
      waitReason: c.waitReason,
      dependsOn: c.dependsOn,
    })),
  );
  const byStep = new Map(children.map((c) => [c.stepId ?? c.id, c]));
  for (const b of decision.blocked) {
    const child = byStep.get(b.stepId);
    if (!child) continue;
    const error = serializeError(
      new BatonError(
        'DEPENDENCY_FAILED',
        `step "${b.stepId}" cannot run: "${b.dependency}" ended ${b.dependencyStatus}`,
        { data: { stepId: b.stepId, dependency: b.dependency, dependencyStatus: b.dependencyStatus } },
      ),
    );
    out.updates.push({
      ids: [child.id],
      set: [
        ['status', 'cancelled'],
        ['wait_reason', null],
        ['error', json(error)],
        ['finished_at', now],
        ['updated_at', now],
      ],
    });
    out.events.push(
      newEvent(child.id, 'run:cancelled', { reason: error.message }),
      newEvent(flow.id, 'flow:step_blocked', b),
    );
  }
  for (const stepId of decision.ready) {
    const child = byStep.get(stepId);
    if (!child) continue;
    out.updates.push({
      ids: [child.id],
      set: [
        ['status', 'queued'],
        ['wait_reason', null],
        ['updated_at', now],
      ],
      ifStatus: 'waiting',
    });
    out.events.push(newEvent(child.id, 'run:queued', { reason: 'dependencies_met' }));
  }
  // The protocol's tracked timeout state, kept current on the flow as each step ends.
  const timeoutState = flowTimeoutState(children);
  if (!decision.finished) {
    out.updates.push({
      ids: [flow.id],
      set: [
        ['meta', json({ ...flow.meta, timeout_state: timeoutState })],
        ['updated_at', now],
      ],
    });
    return out;
  }
  const { status, incomplete } = decision.finished;
  const outputs: Record<string, unknown> = {};
  for (const c of children) if (c.output !== undefined) outputs[c.stepId ?? c.id] = c.output;
  const outputStep = typeof flow.options.outputStep === 'string' ? flow.options.outputStep : undefined;
  const output = outputStep ? outputs[outputStep] : outputs;
  const firstError = children.find((c) => c.status === 'failed')?.error ?? null;
  const ttl = typeof flow.options.ttlMs === 'number' ? flow.options.ttlMs : defaultTtlMs;
  out.updates.push({
    ids: [flow.id],
    set: [
      ['status', status],
      ['wait_reason', null],
      ['output', json(output)],
      ['error', firstError ? json(firstError) : null],
      ['finished_at', now],
      ['expires_at', now + ttl],
      ['meta', json({ ...flow.meta, incomplete, timeout_state: timeoutState })],
      ['updated_at', now],
    ],
  });
  const durationMs = now - (flow.startedAt ?? flow.createdAt);
  out.events.push(
    status === 'succeeded'
      ? newEvent(flow.id, 'run:succeeded', { durationMs })
      : status === 'partial'
        ? newEvent(flow.id, 'run:partial', { durationMs, incomplete })
        : status === 'failed'
          ? newEvent(flow.id, 'run:failed', {
              error: firstError ?? serializeError(new BatonError('TASK_FAILED', 'a step failed')),
            })
          : newEvent(flow.id, 'run:cancelled', { reason: 'a step was cancelled' }),
  );
  out.finished = true;
  return out;
}

/**
 * A task suspended in ctx.invoke (`waiting: child`) is queued again when one of its children ends,
 * in the child's transaction; its replay finds the outcome (or waits again for the others). A task
 * that is still running when its child ends checks its children itself as it suspends.
 */
export function planParentWake(parent: RunRecord, now: number): RunWrites {
  if (parent.status !== 'waiting' || parent.waitReason !== 'child') return { updates: [], events: [] };
  return {
    updates: [
      {
        ids: [parent.id],
        set: [
          ['status', 'queued'],
          ['wait_reason', null],
          ['wake_at', null],
          ['updated_at', now],
        ],
        ifStatus: 'waiting',
      },
    ],
    events: [newEvent(parent.id, 'run:queued', { reason: 'woken' })],
  };
}
