/** The worker's upkeep that needs no worker state: due timer rows, and runs of dead workers taken back. */
import { serializeError } from '../core/index.ts';
import type { TimerRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';
import { isGoneOnThisHost } from './process-identity.ts';

/** Handles a timer row of one kind; resolving to 'keep' leaves the row to come due again. */
export type TimerHandler = (timer: TimerRecord) => Promise<unknown>;

/**
 * Takes up to 100 due timer rows and runs their handlers. Each handler guards its own transition,
 * so they run together and their writes share commits. A taken timer is deleted once handled; one
 * whose handler failed (or whose taker dies) comes due again after the store's hold, so no timer is
 * lost.
 */
export async function handleDueTimers(
  engine: Engine,
  handlers: ReadonlyMap<string, TimerHandler>,
): Promise<void> {
  const due = await engine.store.takeDueTimers(100);
  const handled: string[] = [];
  await Promise.all(
    due.map(async (t) => {
      const handler = handlers.get(t.kind);
      if (!handler) {
        engine.logger.warn({ timer: t.id, kind: t.kind }, 'no handler for timer kind; dropped');
        handled.push(t.id);
        return;
      }
      await handler(t).then(
        (outcome) => {
          if (outcome !== 'keep') handled.push(t.id);
        },
        (err: unknown) =>
          engine.logger.error(
            { timer: t.id, err: serializeError(err) },
            'timer handler failed; it comes due again',
          ),
      );
    }),
  );
  if (handled.length > 0) await engine.store.cancelTimers(handled);
}

/**
 * Takes back at once the runs of gone processes on this host, and expired leases everywhere.
 * `queued` is called right after the writes are asked for, in the same turn: what it asks for joins
 * their commit and is applied after them (a worker's first claim sees the runs handed back).
 */
export async function takeBackRuns(
  engine: Engine,
  self: string,
  host: string,
  queued?: () => void,
): Promise<void> {
  const { store, logger } = engine;
  const workers = await store.listWorkers(host);
  const gone = workers.filter((w) => w.id !== self && isGoneOnThisHost(w, host)).map((w) => w.id);
  // Asked for in one turn, so the three writes share one commit (and one fsync) instead of waiting
  // for each other's: a restarted worker's recovery was five durable commits in a row. The store
  // applies them in this order, and each stands alone (a failure of one leaves the others).
  const writes = Promise.all([
    gone.length > 0 ? store.releaseOwners(gone, 'owner_gone') : [],
    gone.length > 0 ? store.removeWorkers(gone) : undefined,
    store.recoverExpiredLeases(),
  ]);
  queued?.();
  const [back, , expired] = await writes;
  if (back.length > 0) logger.info({ runs: back.length, owners: gone }, 'took back runs of gone workers');
  if (expired.length > 0) logger.info({ runs: expired.length }, 'recovered expired leases');
}
