/**
 * Cooperative time slicing of the event loop. When a thousand attempt deadlines come due within a
 * few milliseconds, each one's follow-up work (building its partial result, deciding on a retry,
 * writing the outcome) must not run in the same turn as the others: the later deadlines would then
 * fire tens of milliseconds late, behind work that could as well wait. Callers queue on a lane;
 * each event-loop turn releases them in order until `sliceMs` of work is spent, then yields, so
 * the timers that came due meanwhile fire before the next slice. A slice also ends before the next
 * timer armed through the system clock is due.
 */

import { msUntilNextTimer } from './clock.ts';

/** Work released per event-loop turn before the lane yields, at most. */
export const DEFAULT_LANE_SLICE_MS = 2;

/**
 * How long cooperative work may run now: up to `maxMs`, and no longer than until the next timer
 * armed through the system clock is due, so that a deadline never waits behind deferrable work. At
 * least one unit of work always runs (a budget of 0 means exactly one).
 */
export function sliceBudget(maxMs: number, untilNextTimer: () => number = msUntilNextTimer): number {
  return Math.max(0, Math.min(maxMs, untilNextTimer()));
}

export class Lane {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  constructor(
    private readonly sliceMs = DEFAULT_LANE_SLICE_MS,
    /** How soon a timer is due (tests pass their own). */
    private readonly untilNextTimer: () => number = msUntilNextTimer,
    /** Elapsed time for the slice (a store passes its clock's: a ManualClock's never runs out). */
    private readonly monotonic: () => number = () => performance.now(),
  ) {}

  /** Resolves when it is this caller's turn: never in the current turn, in order of asking. */
  turn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /**
   * Runs `step` in its turn, like the continuation of a `turn()` but without a promise per caller:
   * for code that releases many callers itself (a write queue settling a synced group). Unlike a
   * turn, a step given to an idle lane runs at once, and the steps given after it in the same turn
   * run in the same slice. A step that throws is reported as an uncaught exception; the lane goes on.
   */
  defer(step: () => void): void {
    this.waiting.push(step);
    if (this.scheduled) return;
    this.scheduled = true;
    void this.drain();
  }

  /** Callers not yet released. */
  get queued(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the timers phase of the next loop iteration has fired what is due.
    setImmediate(() => void this.drain());
  }

  private async drain(): Promise<void> {
    const started = this.monotonic();
    const budget = sliceBudget(this.sliceMs, this.untilNextTimer);
    do {
      const step = this.waiting.shift() as () => void;
      try {
        step();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
      // One microtask hop lets the released caller run up to its next await before the clock is
      // read again, so the slice measures the callers' work and not only the releasing.
      await null;
    } while (this.waiting.length > 0 && this.monotonic() - started < budget);
    this.scheduled = false;
    if (this.waiting.length > 0) this.schedule();
  }
}

/** The process's lane: there is one event loop, so work that yields to it shares one queue. */
export const loopLane = new Lane();
