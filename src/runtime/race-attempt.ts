/**
 * Runs a task body against its deadline. At the timeout the attempt's signal fires and the task
 * gets a grace period to return what it has; after that the attempt is over whether or not the
 * task noticed — its promise is left behind and its context refuses writes.
 */
import { BatonError } from '../core/index.ts';
import { type Clock, loopLane, type TimerHandle } from '../time/index.ts';
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

/** What racing a body needs: its clock, its abort, its time limits. */
export interface RaceOptions {
  clock: Clock;
  controller: LazyAbort;
  timeoutMs: number | null;
  graceMs: number;
  /** Lets the caller end the body's part early (a suspension): the first of the two counts. */
  settleEarly?: (settle: (outcome: Settled) => void) => void;
}

/**
 * One promise and one object per attempt, not a race of promises nor a closure per state change:
 * a thousand attempts start and time out together, and every promise, reaction, closure and
 * closure context they hold is copied by the young generation's collector while their deadlines
 * come due (issue 18 item 5).
 */
export function raceAttempt(body: () => Promise<unknown>, options: RaceOptions): Promise<RaceOutcome> {
  return new Promise<RaceOutcome>((resolve) => {
    new AttemptRace(resolve, options).start(body(), options);
  });
}

/** running → (aborted → waiting for the lane → grace) → over. */
type Phase = 'running' | 'lane' | 'grace' | 'over';

class AttemptRace {
  /** What the body did, once it did it. */
  private work: Settled | undefined;
  private phase: Phase = 'running';
  private timer: TimerHandle | undefined;
  private graceTimer: TimerHandle | undefined;
  private readonly clock: Clock;
  private readonly controller: LazyAbort;
  private readonly graceMs: number;
  /** The abort's listener: one function, so it can be taken off again. */
  private readonly aborted = (): void => this.onAbort();

  constructor(
    private readonly resolve: (outcome: RaceOutcome) => void,
    options: RaceOptions,
  ) {
    this.clock = options.clock;
    this.controller = options.controller;
    this.graceMs = options.graceMs;
  }

  start(body: Promise<unknown>, options: RaceOptions): void {
    body.then(
      (value) => this.settle({ kind: 'ok', value }),
      (error: unknown) => this.settle({ kind: 'error', error }),
    );
    options.settleEarly?.((outcome) => this.settle(outcome));
    if (this.phase !== 'running') return;
    if (this.controller.aborted) {
      this.onAbort();
      return;
    }
    const { timeoutMs } = options;
    if (timeoutMs !== null) this.timer = this.clock.setTimer(timeoutMs, () => this.timedOut(timeoutMs));
    this.controller.onAbort(this.aborted);
  }

  private timedOut(timeoutMs: number): void {
    this.controller.abort(
      new BatonError('TIMEOUT', `attempt timed out after ${timeoutMs} ms`, {
        data: { timeoutMs },
        stack: false,
      }),
    );
  }

  private interrupted(late: Settled | undefined): void {
    this.phase = 'over';
    const reason = this.controller.reason;
    this.resolve(late ? { kind: 'interrupted', reason, late } : { kind: 'interrupted', reason });
  }

  private settle(outcome: Settled): void {
    if (this.work) return;
    this.work = outcome;
    if (this.phase === 'running') {
      this.phase = 'over';
      this.clock.clearTimer(this.timer);
      this.controller.offAbort(this.aborted);
      this.resolve(outcome);
    } else if (this.phase === 'grace') {
      this.clock.clearTimer(this.graceTimer);
      this.interrupted(outcome);
    }
    // In 'lane' the outcome is kept: it is what the task handed back within its grace.
  }

  private onAbort(): void {
    if (this.phase !== 'running') return;
    this.phase = 'lane';
    this.clock.clearTimer(this.timer);
    // Everything after here (recording the timeout, retrying, escalating) waits its turn on the
    // loop's lane, so that the other deadlines due about now fire first instead of queueing behind it.
    void loopLane.turn().then(() => {
      if (this.work) return this.interrupted(this.work);
      this.phase = 'grace';
      this.graceTimer = this.clock.setTimer(this.graceMs, () => {
        if (this.phase === 'grace') this.interrupted(undefined);
      });
    });
  }
}
