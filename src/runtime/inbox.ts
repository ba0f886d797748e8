/**
 * The questions and deliveries waiting across all runs, as an operator's inbox shows them: each
 * open decision with the answer its policy will give if nobody answers and when that happens; each
 * scheduled tool call with its expression, the instant it resolved to and where its delivery stands.
 */
import {
  type BatonEvent,
  type DecisionAnswer,
  type DecisionRequest,
  decideByPolicy,
  isTerminal,
} from '../core/index.ts';
import type { DeliveryRecord, RunRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';
import { runMetaOf } from './run-meta.ts';
import { type RunSchedule, scheduleOf } from './scheduled-delivery.ts';

export interface InboxDecision {
  runId: string;
  rootId: string;
  stepId: string | null;
  name: string;
  request: DecisionRequest;
  reason: string;
  attempt: number;
  /** Epoch ms; null for questions asked before Baton recorded it. */
  askedAt: number | null;
  /** When the policy answers if nobody does; null when the question waits forever. */
  timeoutAt: number | null;
  /** What the task's policy answers at the timeout (or would, unattended). */
  policyAnswer: DecisionAnswer;
}

export function inboxDecision(run: RunRecord): InboxDecision | undefined {
  const pending = runMetaOf(run).decision;
  if (run.status !== 'waiting' || run.waitReason !== 'decision' || !pending) return undefined;
  return {
    runId: run.id,
    rootId: run.rootId,
    stepId: run.stepId,
    name: run.name,
    request: pending.request,
    reason: pending.reason,
    attempt: pending.attempt,
    askedAt: pending.askedAt ?? null,
    timeoutAt: pending.timeoutAt ?? null,
    policyAnswer: decideByPolicy(pending.request, pending.policy),
  };
}

/** Every open question, the soonest timeout first (questions without one last, oldest first). */
export async function decisionInbox(engine: Engine, limit = 1_000): Promise<InboxDecision[]> {
  const runs = await engine.store.listRuns({ waitReason: 'decision', topLevel: false, limit });
  const open = runs.map(inboxDecision).filter((d): d is InboxDecision => d !== undefined);
  const key = (d: InboxDecision) => d.timeoutAt ?? Number.MAX_SAFE_INTEGER;
  return open.sort((a, b) => key(a) - key(b) || (a.runId < b.runId ? -1 : 1));
}

export type DeliveryState =
  /** The tool is working and its time has not come. */
  | 'working'
  /** The result is ready and held until the time the user said. */
  | 'held'
  /** The time came before the result: the in-progress notice went out, the result follows. */
  | 'notified'
  | 'delivered'
  /** Delivered more than a second after its time (Baton was down or busy). */
  | 'late'
  /** The run ended without a delivery (cancelled or expired before it). */
  | 'dropped';

export interface DeliveryEntry {
  runId: string;
  rootId: string;
  name: string;
  status: RunRecord['status'];
  schedule: RunSchedule;
  /** The instant the expression resolved to (epoch ms). */
  dueAt: number;
  state: DeliveryState;
  noticeAt: number | null;
  deliveredAt: number | null;
  /** Callback and webhook sends, with their attempts and last errors. */
  channels: DeliveryRecord[];
}

async function deliveryEvents(engine: Engine, runId: string): Promise<BatonEvent[]> {
  const out: BatonEvent[] = [];
  let afterId = 0;
  for (;;) {
    const batch = await engine.store.readEvents({ runId, afterId, limit: 1000 });
    for (const e of batch) if (e.type === 'tool:choice' || e.type === 'tool:result') out.push(e);
    const last = batch.at(-1);
    if (!last || batch.length < 1000) return out;
    afterId = last.id;
  }
}

export async function deliveryEntry(engine: Engine, run: RunRecord): Promise<DeliveryEntry | undefined> {
  const schedule = scheduleOf(run);
  if (!schedule) return undefined;
  const [events, channels] = await Promise.all([
    deliveryEvents(engine, run.id),
    engine.store.listDeliveries(run.id),
  ]);
  const notice = events.find((e) => e.type === 'tool:choice');
  const result = events.find((e) => e.type === 'tool:result') as BatonEvent<'tool:result'> | undefined;
  const state: DeliveryState = result
    ? result.data.late
      ? 'late'
      : 'delivered'
    : isTerminal(run.status)
      ? 'dropped'
      : run.waitReason === 'delivery'
        ? 'held'
        : notice
          ? 'notified'
          : 'working';
  return {
    runId: run.id,
    rootId: run.rootId,
    name: run.name,
    status: run.status,
    schedule,
    dueAt: schedule.at,
    state,
    noticeAt: notice?.at ?? null,
    deliveredAt: result?.at ?? null,
    channels,
  };
}

/** How long a delivered call stays beside the upcoming ones (so a countdown that reached zero shows its outcome). */
export const RECENT_DELIVERY_MS = 10 * 60_000;

export interface DeliveryBoard {
  deliveries: DeliveryEntry[];
  /** `upcoming` only: those delivered (or dropped) in the last ten minutes, newest first. */
  recent: DeliveryEntry[];
  nextCursor: string | null;
}

/**
 * Scheduled tool calls. `upcoming`: those not yet delivered, the soonest first, and those delivered
 * in the last ten minutes. `all`: every one, newest first, paged by run id.
 */
export async function deliveryBoard(
  engine: Engine,
  options: { state: 'upcoming' | 'all'; limit: number; cursor?: string | undefined },
): Promise<DeliveryBoard> {
  const base = { scheduled: true, topLevel: false } as const;
  if (options.state === 'upcoming') {
    const lists = await Promise.all(
      (['queued', 'running', 'waiting'] as const).map((status) =>
        engine.store.listRuns({ ...base, status, limit: options.limit }),
      ),
    );
    const runs = lists
      .flat()
      .sort((a, b) => (scheduleOf(a)?.at ?? 0) - (scheduleOf(b)?.at ?? 0))
      .slice(0, options.limit);
    const since = engine.clock.now() - RECENT_DELIVERY_MS;
    const ended = (await engine.store.listRuns({ ...base, limit: options.limit })).filter(
      (r) => isTerminal(r.status) && (r.finishedAt ?? 0) >= since,
    );
    const [entries, recent] = await Promise.all([
      Promise.all(runs.map((r) => deliveryEntry(engine, r))),
      Promise.all(ended.map((r) => deliveryEntry(engine, r))),
    ]);
    const found = (e: DeliveryEntry | undefined): e is DeliveryEntry => e !== undefined;
    return { deliveries: entries.filter(found), recent: recent.filter(found), nextCursor: null };
  }
  const runs = await engine.store.listRuns({
    ...base,
    limit: options.limit,
    ...(options.cursor !== undefined ? { beforeId: options.cursor } : {}),
  });
  const entries = await Promise.all(runs.map((r) => deliveryEntry(engine, r)));
  return {
    deliveries: entries.filter((e): e is DeliveryEntry => e !== undefined),
    recent: [],
    nextCursor: runs.length === options.limit ? (runs.at(-1)?.id ?? null) : null,
  };
}
