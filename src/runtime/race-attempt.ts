/**
 * Runs a task body against its deadline. At the timeout the attempt's signal fires and the task
 * gets a grace period to return what it has; after that the attempt is over whether or not the
 * task noticed — its promise is left behind and its context refuses writes.
 */
import { BatonError } from '../core/index.ts';
import { type Clock, loopLane } from '../time/index.ts';
import type { LazyAbort } from './lazy-abort.ts';

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

/**
 * One promise and a few closures per attempt, not a race of promises: a thousand attempts start and
 * time out together, and every promise, reaction and closure they leave is garbage the young
 * generation's collector copies while their deadlines come due.
 */
export function raceAttempt(
  body: () => Promise<unknown>,
  options: {
    clock: Clock;
    controller: LazyAbort;
    timeoutMs: number | null;
    graceMs: number;
    /** Lets the caller end the body's part early (a suspension): the first of the two counts. */
    settleEarly?: (settle: (outcome: Settled) => void) => void;
  },
): Promise<RaceOutcome> {
  const { clock, controller, timeoutMs, graceMs } = options;
  return new Promise<RaceOutcome>((resolve) => {
    /** What the body did, once it did it. */
    let work: Settled | undefined;
    /** running → (aborted → waiting for the lane → grace) → over. */
    let phase: 'running' | 'lane' | 'grace' | 'over' = 'running';
    let timer: ReturnType<Clock['setTimer']> | undefined;
    let graceTimer: ReturnType<Clock['setTimer']> | undefined;
    const interrupted = (late: Settled | undefined): void => {
      phase = 'over';
      resolve(
        late
          ? { kind: 'interrupted', reason: controller.reason, late }
          : { kind: 'interrupted', reason: controller.reason },
      );
    };
    const settle = (outcome: Settled): void => {
      if (work) return;
      work = outcome;
      if (phase === 'running') {
        phase = 'over';
        clock.clearTimer(timer);
        controller.offAbort(onAbort);
        resolve(outcome);
      } else if (phase === 'grace') {
        clock.clearTimer(graceTimer);
        interrupted(outcome);
      }
      // In 'lane' the outcome is kept: it is what the task handed back within its grace.
    };
    const onAbort = (): void => {
      if (phase !== 'running') return;
      phase = 'lane';
      clock.clearTimer(timer);
      // Everything after here (recording the timeout, retrying, escalating) waits its turn on the
      // loop's lane, so that the other deadlines due about now fire first instead of queueing behind it.
      void loopLane.turn().then(() => {
        if (work) return interrupted(work);
        phase = 'grace';
        graceTimer = clock.setTimer(graceMs, () => {
          if (phase === 'grace') interrupted(undefined);
        });
      });
    };
    body().then(
      (value) => settle({ kind: 'ok', value }),
      (error: unknown) => settle({ kind: 'error', error }),
    );
    options.settleEarly?.(settle);
    if (phase !== 'running') return;
    if (controller.aborted) return onAbort();
    if (timeoutMs !== null)
      timer = clock.setTimer(timeoutMs, () =>
        controller.abort(
          new BatonError('TIMEOUT', `attempt timed out after ${timeoutMs} ms`, {
            data: { timeoutMs },
            stack: false,
          }),
        ),
      );
    controller.onAbort(onAbort);
  });
}
