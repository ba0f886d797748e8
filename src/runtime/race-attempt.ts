/**
 * Runs a task body against its deadline. At the timeout the attempt's signal fires and the task
 * gets a grace period to return what it has; after that the attempt is over whether or not the
 * task noticed — its promise is left behind and its context refuses writes.
 */
import { BatonError } from '../core/index.ts';
import { type Clock, loopLane } from '../time/index.ts';

export type Settled = { kind: 'ok'; value: unknown } | { kind: 'error'; error: unknown };

export type RaceOutcome =
  | Settled
  | {
      kind: 'interrupted';
      /** Why the signal fired (a TIMEOUT BatonError, a cancel, a lost lease, a shutdown). */
      reason: unknown;
      /** What the task returned or threw within its grace period, if anything. */
      late?: Settled;
    };

export async function raceAttempt(
  body: () => Promise<unknown>,
  options: { clock: Clock; controller: AbortController; timeoutMs: number | null; graceMs: number },
): Promise<RaceOutcome> {
  const { clock, controller, timeoutMs, graceMs } = options;
  const work: Promise<Settled> = body().then(
    (value) => ({ kind: 'ok', value }),
    (error: unknown) => ({ kind: 'error', error }),
  );
  const timer =
    timeoutMs === null
      ? undefined
      : clock.setTimer(timeoutMs, () =>
          controller.abort(
            new BatonError('TIMEOUT', `attempt timed out after ${timeoutMs} ms`, {
              data: { timeoutMs },
              stack: false,
            }),
          ),
        );
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    if (controller.signal.aborted) return resolve('interrupted');
    onAbort = () => resolve('interrupted');
    controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  const first = await Promise.race([work, interrupted]);
  clock.clearTimer(timer);
  if (first !== 'interrupted') {
    if (onAbort) controller.signal.removeEventListener('abort', onAbort);
    return first;
  }
  // Everything after here (recording the timeout, retrying, escalating) waits its turn on the
  // loop's lane, so that the other deadlines due about now fire first instead of queueing behind it.
  await loopLane.turn();
  let graceTimer: ReturnType<Clock['setTimer']> | undefined;
  const graceOver = new Promise<'over'>((resolve) => {
    graceTimer = clock.setTimer(graceMs, () => resolve('over'));
  });
  const late = await Promise.race([work, graceOver]);
  clock.clearTimer(graceTimer);
  return late === 'over'
    ? { kind: 'interrupted', reason: controller.signal.reason }
    : { kind: 'interrupted', reason: controller.signal.reason, late };
}
