/**
 * Ends an attempt whose body waits durably: one fenced transition moves the run to `waiting`
 * (the lease and the concurrency slot are free) and records what it waits for.
 *
 * - Only timers (`ctx.sleep`): `waiting: timer` with the run's `wake_at` — the claim query takes
 *   it when that time comes, like a retry backoff. A sleeping run is one row.
 * - A child or a signal: `waiting: child` / `waiting: signal`, woken by the child's end or the
 *   signal (see wake-run.ts); a timeout or a sleep alongside is a `run-wake` timer row written in
 *   the same transaction.
 */
import { type NewEvent, newEvent, type SuspendedWait, type WaitReason } from '../core/index.ts';
import type { TimerRecord } from '../store/index.ts';
import type { PendingDecision } from './decisions.ts';
import { type DurableWait, earliestWake } from './durable-waits.ts';
import type { Engine } from './engine.ts';
import { type AttemptSummary, replayEvents } from './finish-attempt.ts';
import { WAKE_TIMER, wakeIfReady, wakeTimerId } from './wake-run.ts';

export async function suspendRun(
  engine: Engine,
  s: AttemptSummary,
  waits: readonly DurableWait[],
): Promise<void> {
  const now = engine.clock.now();
  const wakeAt = earliestWake(waits);
  // A question to a person (ctx.requestApproval) is a decision on the run, open to every way of
  // answering one; its other waits (a timeout) still wake it through the run-wake timers.
  const asking = waits.find((w) => w.kind === 'signal' && w.approval !== undefined);
  const approval = asking?.kind === 'signal' ? asking.approval : undefined;
  const reason: WaitReason = approval
    ? 'decision'
    : waits.some((w) => w.kind === 'child')
      ? 'child'
      : waits.some((w) => w.kind === 'signal')
        ? 'signal'
        : 'timer';
  const timer = (at: number): TimerRecord => ({
    id: wakeTimerId(s.run.id, at),
    runId: s.run.id,
    kind: WAKE_TIMER,
    dueAt: at,
    payload: { runId: s.run.id },
    createdAt: now,
  });
  // Waiting on a child or a signal: a timer at the earliest timeout, and one due now. A child
  // that ended (or a signal that came) while this attempt was still running found nothing to wake;
  // the check right after this commit sees it, and the timer makes that check survive a crash.
  const timers: TimerRecord[] =
    reason === 'timer' ? [] : [timer(now), ...(wakeAt !== null && wakeAt > now ? [timer(wakeAt)] : [])];
  const awaiting = waits.map(describe);
  const events: NewEvent[] = [
    ...replayEvents(s),
    newEvent(s.run.id, 'attempt:suspended', {
      attempt: s.run.attempt,
      durationMs: Math.round(engine.clock.monotonic() - s.startedMono),
      waits: awaiting,
    }),
    ...(approval && asking?.kind === 'signal'
      ? [
          newEvent(s.run.id, 'decision:requested', {
            request: { ...approval.request },
            reason: 'approval',
            ...(asking.timeoutAt !== null ? { timeoutAt: new Date(asking.timeoutAt).toISOString() } : {}),
          }),
        ]
      : []),
    newEvent(s.run.id, 'run:waiting', {
      reason,
      ...(wakeAt !== null ? { wakeAt: new Date(wakeAt).toISOString() } : {}),
      ...(approval ? { detail: approval.request.message.split('\n')[0] ?? '' } : {}),
    }),
  ];
  const decision: PendingDecision | undefined =
    approval && asking?.kind === 'signal'
      ? {
          request: approval.request,
          reason: 'approval',
          result: null,
          attempt: s.run.attempt,
          askedAt: now,
          ...(asking.timeoutAt !== null ? { timeoutAt: asking.timeoutAt } : {}),
          approval: { signal: asking.name, onTimeout: approval.onTimeout },
        }
      : undefined;
  await engine.store.transition(
    s.run.id,
    {
      status: 'waiting',
      waitReason: reason,
      wakeAt: reason === 'timer' ? wakeAt : null,
      meta: { awaiting, ...(decision ? { decision } : {}) },
    },
    events,
    { fence: s.fence },
    timers.length > 0 ? { timers } : undefined,
  );
  if (reason !== 'timer') await wakeIfReady(engine, s.run.id);
}

function describe(w: DurableWait): SuspendedWait {
  const at = w.kind === 'timer' ? w.wakeAt : w.timeoutAt;
  return {
    kind: w.kind,
    key: w.key,
    ...(at !== null ? { until: new Date(at).toISOString() } : {}),
    ...(w.kind === 'child' ? { childId: w.childId } : {}),
    ...(w.kind === 'signal' ? { signal: w.name } : {}),
  };
}
