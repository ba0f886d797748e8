/**
 * A tool call waits for its run under the client's patience (`replyWithin`), telling the client how
 * the run is doing through MCP progress notifications taken from its checkpoints, partial findings
 * and time status. It answers with the result, a question, or — when time is up — the partial
 * findings and the id to resume. A client that cancels its request cancels the run.
 */
import type { BatonEvent } from '../core/index.ts';
import type { Baton } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import { decisionAnswer, finishedAnswer, type ToolAnswer, timeoutAnswer } from './run-answers.ts';

export interface ProgressSink {
  token: string | number;
  send(progress: { progress: number; total?: number; message?: string }): Promise<void>;
}

export interface WaitRequest {
  runId: string;
  replyWithinMs: number;
  /** Aborts when the client cancels its request (or the connection goes). */
  signal: AbortSignal;
  progress: ProgressSink | undefined;
  wasResumed: boolean;
  /** Report events from this time on (the store clock's epoch ms): a resumed call skips the past. */
  since: number;
}

/** The progress notification an event is worth, if any. */
export function progressOf(e: BatonEvent): { percent?: number; message: string } | undefined {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'checkpoint:saved': {
      const pct = typeof d.progressPercentage === 'number' ? d.progressPercentage : undefined;
      const parts = [`checkpoint ${d.seq}`];
      if (pct !== undefined) parts.push(`${pct}% done`);
      if (typeof d.itemsAnalyzed === 'number') parts.push(`${d.itemsAnalyzed} items`);
      if (typeof d.timeStatus === 'string') parts.push(String(d.timeStatus));
      if (typeof d.remainingSeconds === 'number') parts.push(`${d.remainingSeconds} s left`);
      return { ...(pct !== undefined ? { percent: pct } : {}), message: parts.join(', ') };
    }
    case 'progress:reported': {
      const total = typeof d.total === 'number' && d.total > 0 ? d.total : undefined;
      const done = Number(d.done);
      return {
        ...(total !== undefined ? { percent: Math.min(100, (100 * done) / total) } : {}),
        message: total !== undefined ? `${done} of ${total}` : `${done} done`,
      };
    }
    case 'partial:recorded':
      return { message: `${d.total} finding(s) so far` };
    case 'time:mode_changed':
      return { message: `time ${d.timeStatus}: ${d.remainingSeconds} s left, mode ${d.to}` };
    case 'attempt:timed_out':
      return {
        message: `attempt ${d.attempt} timed out after ${d.timeoutMs} ms with ${d.findings} finding(s)`,
      };
    case 'attempt:retrying':
      return { message: `retrying: attempt ${d.nextAttempt} in ${d.waitMs} ms` };
    case 'attempt:started':
      return { message: `attempt ${d.attempt} started` };
    default:
      return undefined;
  }
}

/** Follows the run's events and sends them as progress notifications until `stop` aborts. */
async function followProgress(
  baton: Baton,
  runId: string,
  since: number,
  sink: ProgressSink,
  stop: AbortSignal,
) {
  // Progress must grow with every notification: a percentage when the run reports one, else a step.
  let last = 0;
  try {
    for await (const e of baton.events(runId, { signal: stop })) {
      if (e.at < since) continue;
      const p = progressOf(e);
      if (!p) continue;
      const next = p.percent !== undefined && p.percent > last ? p.percent : last + 0.001;
      last = next;
      await sink.send({ progress: Number(next.toFixed(3)), total: 100, message: p.message });
    }
  } catch {
    // The stream ends with the wait (aborted) or the client went away: nothing to report.
  }
}

export async function waitForRun(baton: Baton, req: WaitRequest): Promise<ToolAnswer> {
  const clock = baton.clock;
  const arrived = clock.monotonic();
  const done = new AbortController();
  let reason: 'deadline' | 'cancelled' | undefined;
  const timer = clock.setTimer(req.replyWithinMs, () => {
    reason ??= 'deadline';
    done.abort(new Error('deadline'));
  });
  const onCancel = () => {
    reason ??= 'cancelled';
    done.abort(new Error('cancelled'));
  };
  req.signal.addEventListener('abort', onCancel, { once: true });
  if (req.signal.aborted) onCancel();
  const stopProgress = new AbortController();
  const following = req.progress
    ? followProgress(baton, req.runId, req.since, req.progress, stopProgress.signal)
    : undefined;
  let run: RunRecord | undefined;
  try {
    run = await baton.settled(req.runId, { signal: done.signal });
  } catch (err) {
    if (!done.signal.aborted) throw err;
  } finally {
    clock.clearTimer(timer);
    req.signal.removeEventListener('abort', onCancel);
    stopProgress.abort();
    await following;
  }
  if (reason === 'cancelled') {
    await baton.cancel(req.runId, 'cancelled by the MCP client').catch(() => {});
  }
  const current = run ?? (await baton.getRun(req.runId));
  if (!current) throw new Error(`run ${req.runId} vanished while a tool call waited for it`);
  return answerFor(baton, current, {
    waitedMs: clock.monotonic() - arrived,
    replyWithinMs: req.replyWithinMs,
    wasResumed: req.wasResumed,
    timedOut: run === undefined,
  });
}

export async function answerFor(
  baton: Baton,
  run: RunRecord,
  how: { waitedMs: number; replyWithinMs: number; wasResumed: boolean; timedOut: boolean },
): Promise<ToolAnswer> {
  const partials = await baton.store.listPartials(run.id);
  if (run.status === 'waiting' && run.waitReason !== 'resume') {
    const decisions = await baton.openDecisions(run.id);
    if (decisions.length > 0) return decisionAnswer(run, decisions);
  } else if (run.kind === 'flow' && !how.timedOut) {
    const decisions = await baton.openDecisions(run.id);
    if (decisions.length > 0) return decisionAnswer(run, decisions);
  }
  if (['succeeded', 'partial', 'failed', 'cancelled', 'expired'].includes(run.status))
    return finishedAnswer(run, partials);
  return timeoutAnswer(run, partials, how.waitedMs, how.replyWithinMs, how.wasResumed);
}
