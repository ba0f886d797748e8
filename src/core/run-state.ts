/**
 * The run state machine (DESIGN.md "Run lifecycle"):
 *
 *   queued → running → (waiting: timer | decision | dependency | delivery) → running
 *          → succeeded | partial | failed | cancelled | expired
 *
 * A run is `queued` when a worker may claim it. `running` means a worker holds its lease and an
 * attempt is under way. `waiting` always carries a reason: a `timer` (retry backoff; the run
 * becomes claimable when its wake time passes), a `decision` (an escalation waiting for a human or
 * a policy), a `dependency` (a flow step whose upstream steps have not finished) or a `delivery`
 * (a finished scheduled tool call whose result is held until its due time) or a `resume` (an agent
 * job that saved its conversation at its invocation limit and waits for its client to resume it,
 * the protocol's resumable timeout), a `child` (a task awaiting a run it invoked with `ctx.invoke`) or
 * a `signal` (a task in `ctx.waitFor`). A durable `ctx.sleep` waits as a `timer`. The five terminal
 * states never change again, except that `resume` may send a failed, partial or cancelled run back
 * to `queued` for another try from its last checkpoint. Flows (the parent of step runs) are never
 * claimed: they move when their steps finish, in the same transaction.
 */
import { BatonError } from './errors.ts';

/** Every run status, in life order. */
export const RunStatuses = [
  'queued',
  'running',
  'waiting',
  'succeeded',
  'partial',
  'failed',
  'cancelled',
  'expired',
] as const;
/** Where a run is in its life: queued, running, waiting, or one of the terminal statuses. */
export type RunStatus = (typeof RunStatuses)[number];

export const WaitReasons = [
  'timer',
  'decision',
  'dependency',
  'delivery',
  'resume',
  'child',
  'signal',
] as const;
/** Why a waiting run waits (a timer, a decision, a dependency, a delivery, a resume, a child, a signal). */
export type WaitReason = (typeof WaitReasons)[number];

/** The statuses a run never leaves. */
export const TerminalStatuses: ReadonlySet<RunStatus> = new Set([
  'succeeded',
  'partial',
  'failed',
  'cancelled',
  'expired',
]);

/** True for a status a run never leaves (succeeded, partial, failed, cancelled, expired). */
export function isTerminal(status: RunStatus): boolean {
  return TerminalStatuses.has(status);
}

/** Statuses whose output a downstream step may consume (partial ones are marked incomplete). */
export function isUsable(status: RunStatus): boolean {
  return status === 'succeeded' || status === 'partial';
}

const ALLOWED: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['running', 'waiting', 'cancelled', 'expired', 'failed'],
  running: ['queued', 'waiting', 'succeeded', 'partial', 'failed', 'cancelled'],
  waiting: ['queued', 'running', 'succeeded', 'partial', 'failed', 'cancelled', 'expired', 'waiting'],
  succeeded: [],
  // Resume sends ended runs back: tasks to queued, flows to running, blocked steps to waiting.
  partial: ['queued', 'running', 'waiting'],
  failed: ['queued', 'running', 'waiting'],
  cancelled: ['queued', 'running', 'waiting'],
  expired: [],
};

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function assertTransition(runId: string, from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) {
    throw new BatonError('RUN_CONFLICT', `run ${runId} cannot go from ${from} to ${to}`, {
      data: { runId, from, to },
    });
  }
}

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RunStatuses as readonly string[]).includes(value);
}
