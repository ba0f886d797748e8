/**
 * Waking a run suspended in `ctx.invoke` or `ctx.waitFor` (`waiting: child | signal`). The usual
 * wake-up happens in the transaction of its cause (a child ending, a signal arriving); this check
 * covers the rest — a cause that came while the run was still running, a timeout passing — and is
 * what the `run-wake` timer rows run. It is idempotent: a run already woken is left alone, and a
 * run woken too early replays, finds its waits still open and suspends again.
 */
import { isBatonError, isTerminal, newEvent } from '../core/index.ts';
import type { Engine } from './engine.ts';
import { runMetaOf } from './run-meta.ts';

/** The timer kind that makes a suspended run check its waits. */
export const WAKE_TIMER = 'run-wake';

export function wakeTimerId(runId: string, at: number): string {
  return `wake:${runId}:${at}`;
}

export async function wakeIfReady(engine: Engine, runId: string): Promise<boolean> {
  const { store } = engine;
  const run = await store.getRun(runId);
  if (run?.status !== 'waiting') return false;
  const meta = runMetaOf(run);
  // A question to a person (ctx.requestApproval) wakes by its answer (approval.ts) or its timeout.
  const asking = run.waitReason === 'decision' && meta.decision?.approval !== undefined;
  if (run.waitReason !== 'child' && run.waitReason !== 'signal' && !asking) return false;
  const now = engine.clock.now();
  let ready = false;
  for (const w of meta.awaiting) {
    if (w.until !== undefined && Date.parse(w.until) <= now) ready = true;
    else if (w.kind === 'child' && w.childId !== undefined) {
      const child = await store.getRun(w.childId);
      ready = !child || isTerminal(child.status);
    } else if (w.kind === 'signal' && w.signal !== undefined && !asking)
      ready = (await store.listSignals(runId, { name: w.signal, unread: true })).length > 0;
    if (ready) break;
  }
  if (!ready) return false;
  try {
    await store.transition(
      runId,
      { status: 'queued', waitReason: null, wakeAt: null, ...(asking ? { meta: { decision: null } } : {}) },
      [newEvent(runId, 'run:queued', { reason: 'woken' })],
      { expectStatus: ['waiting'] },
    );
  } catch (err) {
    // Woken meanwhile by its cause, or cancelled: nothing left to do.
    if (isBatonError(err, 'RUN_CONFLICT')) return false;
    throw err;
  }
  engine.offer([runId]);
  return true;
}
