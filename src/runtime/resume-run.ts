/**
 * Resume, exactly as DESIGN.md "Run lifecycle" says: a succeeded run returns its stored result and
 * does no work; a run held by a live worker elsewhere is refused with a conflict naming the holder;
 * a run held by a gone process on this host, or by an expired lease, is taken back at once; a
 * failed, partial or cancelled run goes back to the queue and starts again from its last
 * checkpoint, with its memoized steps kept. A flow reopens with its failed and blocked steps, in
 * one transaction.
 */
import { hostname } from 'node:os';
import { BatonError, type NewEvent, newEvent, type RunStatus } from '../core/index.ts';
import type { RunPatch, RunRecord, TransitionGuard } from '../store/index.ts';
import { type EndedByAnswer, endedByAnswer } from './decisions.ts';
import type { Engine } from './engine.ts';
import { isGoneOnThisHost } from './process-identity.ts';
import { requireRun } from './watch-run.ts';

/** What baton.resume did, and the run as it is now. */
export interface ResumeResult {
  run: RunRecord;
  /** What resume did, for people: "already succeeded", "requeued from checkpoint 3", … */
  action:
    | 'already_succeeded'
    | 'already_running_here'
    | 'requeued'
    | 'taken_back'
    | 'queued'
    | 'reopened'
    | 'ended_by_answer';
  /** For `ended_by_answer`: the person's answer that ended the run. */
  endedBy?: EndedByAnswer;
}

/** Options of baton.resume. */
export interface ResumeOptions {
  /** A run already resumed by someone else (queued or running) is a RUN_CONFLICT. @default false */
  strict?: boolean;
  /** Run again a run that a person's answer (continue_partial, skip, abandon…) ended. @default false */
  again?: boolean;
}

type Change = { runId: string; patch: RunPatch; events: readonly NewEvent[]; guard?: TransitionGuard };

const ENDED_RESUMABLE: readonly RunStatus[] = ['failed', 'partial', 'cancelled'];

export async function resumeRun(
  engine: Engine,
  id: string,
  by: string,
  isRunningHere: (runId: string) => boolean,
  options: ResumeOptions = {},
): Promise<ResumeResult> {
  // The common resume — a task waiting for its client after an invocation limit, or on a timer —
  // writes next, guarded by the status it read, and answers with what that write returns: its
  // sync covers every earlier commit, so the read need not wait for one of its own (a sync at p99
  // was 14-21 ms of the HTTP resume, the wait 18-31). Anything else reads again, durably.
  const peeked = await engine.store.getRun(id, { durable: false });
  if (peeked && requeuesAtOnce(peeked)) return requeueWaiting(engine, peeked, by);
  const run = await requireRun(engine, id);
  // A person ended it on purpose: starting the work over is not what "resume" should do silently.
  const endedBy = ENDED_RESUMABLE.includes(run.status) && !options.again ? endedByAnswer(run) : undefined;
  if (endedBy) return { run, action: 'ended_by_answer', endedBy };
  const strict = options.strict ?? false;
  if (run.kind === 'flow') return resumeFlow(engine, run, by, isRunningHere);
  if (run.parentId && ENDED_RESUMABLE.includes(run.status)) {
    // A step of a flow: reopen through its flow so the flow can finish again.
    const flow = await requireRun(engine, run.parentId);
    const result = await resumeFlow(engine, flow, by, isRunningHere, run.id);
    return { ...result, run: await requireRun(engine, id) };
  }
  return resumeTask(engine, run, by, isRunningHere, strict);
}

/**
 * `strict` is the resume an API client asks for: if someone else already resumed the run (it is
 * queued or running), this caller gets a conflict naming the holder instead of sharing the run.
 */
async function resumeTask(
  engine: Engine,
  run: RunRecord,
  by: string,
  isRunningHere: (runId: string) => boolean,
  strict = false,
): Promise<ResumeResult> {
  switch (run.status) {
    case 'succeeded':
      return { run, action: 'already_succeeded' };
    case 'queued':
      if (strict)
        throw new BatonError('RUN_CONFLICT', `run ${run.id} was already resumed and is queued`, {
          data: { runId: run.id, holder: 'queued' },
        });
      return { run, action: 'queued' };
    case 'expired':
      throw new BatonError('RUN_NOT_RESUMABLE', `run ${run.id} has expired and cannot be resumed`, {
        data: { runId: run.id },
      });
    case 'running': {
      if (strict)
        throw new BatonError(
          'RUN_CONFLICT',
          `run ${run.id} is already running, held by ${run.leaseOwner ?? 'unknown'}`,
          {
            data: { runId: run.id, holder: run.leaseOwner },
          },
        );
      if (isRunningHere(run.id)) return { run, action: 'already_running_here' };
      await takeBack(engine, run);
      return { run: await requireRun(engine, run.id), action: 'taken_back' };
    }
    case 'waiting':
      // Finished and held for its delivery time: there is nothing to resume.
      if (run.waitReason === 'delivery') return { run, action: 'queued' };
      if (run.waitReason === 'timer' || run.waitReason === 'resume') return requeueWaiting(engine, run, by);
      throw new BatonError(
        'RUN_CONFLICT',
        run.waitReason === 'decision'
          ? `run ${run.id} is waiting for a decision; answer it with \`baton decide ${run.id} <choice>\``
          : `run ${run.id} is waiting (${run.waitReason}); resume its flow ${run.parentId ?? ''} instead`,
        { data: { runId: run.id, status: run.status, waitReason: run.waitReason } },
      );
    default: {
      const reopened = engine.store.transitionAll([reopenTask(run, by)]);
      engine.offer([run.id]);
      const [next] = await reopened;
      return { run: next as RunRecord, action: 'requeued' };
    }
  }
}

/** A task (not a flow, not a flow's step) waiting on a timer or for its client to resume it. */
function requeuesAtOnce(run: RunRecord): boolean {
  return (
    run.kind !== 'flow' &&
    run.status === 'waiting' &&
    (run.waitReason === 'timer' || run.waitReason === 'resume')
  );
}

/** Back to the queue, offered to this process's worker in the same commit. */
async function requeueWaiting(engine: Engine, run: RunRecord, by: string): Promise<ResumeResult> {
  const requeued = engine.store.transition(
    run.id,
    { status: 'queued', waitReason: null, wakeAt: null, expiresAt: null },
    [
      newEvent(run.id, 'run:resumed', { from: 'waiting', by }),
      newEvent(run.id, 'run:queued', { reason: 'resumed' }),
    ],
    { expectStatus: ['waiting'] },
  );
  engine.offer([run.id]);
  return { run: await requeued, action: 'requeued' };
}

function reopenTask(run: RunRecord, by: string): Change {
  return {
    runId: run.id,
    patch: {
      status: 'queued',
      waitReason: null,
      wakeAt: null,
      error: null,
      finishedAt: null,
      expiresAt: null,
      meta: { failures: 0, incomplete: false, endedBy: null },
    },
    events: [
      newEvent(run.id, 'run:resumed', { from: run.status, by }),
      newEvent(run.id, 'run:queued', { reason: 'resumed' }),
    ],
    guard: { expectStatus: [run.status] },
  };
}

/** Frees a run held by a dead process on this host or an expired lease; else a conflict naming the holder. */
async function takeBack(engine: Engine, run: RunRecord): Promise<void> {
  const holder = run.leaseOwner ?? 'unknown';
  const now = engine.clock.now();
  if (run.leaseExpiresAt !== null && run.leaseExpiresAt <= now) {
    await engine.store.recoverExpiredLeases();
    return;
  }
  const host = holder.split('/')[0] ?? '';
  const workers = await engine.store.listWorkers(host);
  const worker = workers.find((w) => w.id === holder);
  const gone = worker ? isGoneOnThisHost(worker, hostname()) : host === hostname();
  if (gone) {
    await engine.store.releaseOwners([holder], 'owner_gone');
    if (worker) await engine.store.removeWorkers([holder]);
    return;
  }
  const until =
    run.leaseExpiresAt === null ? '' : ` (lease until ${new Date(run.leaseExpiresAt).toISOString()})`;
  throw new BatonError('RUN_CONFLICT', `run ${run.id} is already running, held by ${holder}${until}`, {
    data: { runId: run.id, holder, leaseExpiresAt: run.leaseExpiresAt },
  });
}

async function resumeFlow(
  engine: Engine,
  flow: RunRecord,
  by: string,
  isRunningHere: (runId: string) => boolean,
  onlyStep?: string,
): Promise<ResumeResult> {
  if (flow.status === 'succeeded') return { run: flow, action: 'already_succeeded' };
  if (flow.status === 'expired')
    throw new BatonError('RUN_NOT_RESUMABLE', `run ${flow.id} has expired and cannot be resumed`);
  const steps = await engine.store.listRuns({ parentId: flow.id, limit: 10_000 });
  let action: ResumeResult['action'] = 'queued';
  for (const s of steps) {
    if (s.status === 'running' && !isRunningHere(s.id)) {
      await takeBack(engine, s);
      action = 'taken_back';
    } else if (s.status === 'waiting' && s.waitReason === 'timer') {
      await resumeTask(engine, s, by, isRunningHere);
      action = 'requeued';
    }
  }
  const changes: Change[] = [];
  // Partial steps are a valid end; they are redone only when resumed by their own id.
  const reopen = steps.filter(
    (s) =>
      s.status === 'failed' ||
      (s.status === 'cancelled' && s.error?.code !== 'DEPENDENCY_FAILED') ||
      (s.status === 'partial' && s.id === onlyStep),
  );
  const blocked = steps.filter((s) => s.status === 'cancelled' && s.error?.code === 'DEPENDENCY_FAILED');
  if (reopen.length > 0 || blocked.length > 0) {
    if (flow.status !== 'running')
      changes.push({
        runId: flow.id,
        patch: {
          status: 'running',
          output: null,
          error: null,
          finishedAt: null,
          expiresAt: null,
          meta: { endedBy: null },
        },
        events: [newEvent(flow.id, 'run:resumed', { from: flow.status, by })],
        guard: { expectStatus: [flow.status] },
      });
    for (const s of reopen) changes.push(reopenTask(s, by));
    for (const s of blocked)
      changes.push({
        runId: s.id,
        patch: { status: 'waiting', waitReason: 'dependency', error: null, finishedAt: null },
        events: [newEvent(s.id, 'run:waiting', { reason: 'dependency', detail: s.dependsOn.join(', ') })],
        guard: { expectStatus: ['cancelled'] },
      });
    await engine.store.transitionAll(changes);
    action = 'reopened';
  }
  return { run: await requireRun(engine, flow.id), action };
}
