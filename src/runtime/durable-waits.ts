/**
 * Durable waits inside a task body (`ctx.sleep`, `ctx.sleepUntil`, `ctx.invoke`, `ctx.waitFor`).
 *
 * A durable wait is a memoized step whose completion happens outside the attempt: a timer coming
 * due, a child run ending, a signal arriving. When the body can go no further without one, the
 * attempt is *suspended*: its promise is abandoned, the run moves to `waiting` (no lease, no slot)
 * and the next attempt replays the body — recorded steps return their records, waits that are over
 * return at once, and the body carries on from there.
 *
 * "Can go no further" is judged here: some wait is pending and nothing the context is doing for the
 * body (a `ctx.step` function, the write that records a wait) is still in flight. The check runs a
 * macrotask later, so every call made in the same turn — `Promise.all([ctx.invoke(a), ctx.invoke(b)])`
 * — registers its wait (and starts its child) before the attempt ends. Work the body does outside
 * the context in parallel with a wait is dropped at suspension and done again on replay.
 */

import type { ApprovalChoice, DecisionRequest } from '../core/index.ts';

/** What a suspended run waits for; stored in its meta as `awaiting` (the timeline shows it). */
export type DurableWait =
  | { kind: 'timer'; key: string; wakeAt: number }
  | { kind: 'child'; key: string; childId: string; timeoutAt: number | null }
  | { kind: 'signal'; key: string; name: string; timeoutAt: number | null; approval?: ApprovalWait };

/** A signal wait that is a question to a person (`ctx.requestApproval`): the run waits as `decision`. */
export interface ApprovalWait {
  request: DecisionRequest;
  onTimeout: ApprovalChoice;
}

/** Thrown out of the body race when the attempt suspends (not an Error: it is control flow). */
export class Suspension {
  constructor(readonly waits: readonly DurableWait[]) {}
}

/** The earliest moment a suspended run must be looked at again by time alone (null: never). */
export function earliestWake(waits: readonly DurableWait[]): number | null {
  let at: number | null = null;
  for (const w of waits) {
    const t = w.kind === 'timer' ? w.wakeAt : w.timeoutAt;
    if (t !== null && (at === null || t < at)) at = t;
  }
  return at;
}

export class DurableWaits {
  private readonly waits: DurableWait[] = [];
  /** Made on the first unkeyed call: most attempts make none, and every attempt has one of these. */
  private counters: Map<string, number> | undefined;
  private busy = 0;
  private checking = false;
  private settled = false;
  /** Called once with the pending waits when the body can go no further without them. */
  private onSuspend: ((waits: readonly DurableWait[]) => void) | undefined;
  /** Waits that suspended the body before anyone asked (see whenSuspended). */
  private suspendedWith: readonly DurableWait[] | undefined;

  /**
   * `fn` gets the pending waits once the body can go no further without them (a callback, not a
   * promise: each attempt has one, and almost none suspends).
   */
  whenSuspended(fn: (waits: readonly DurableWait[]) => void): void {
    if (this.suspendedWith) fn(this.suspendedWith);
    else this.onSuspend = fn;
  }

  /**
   * The key of the next call of a kind: `baton:<kind>:<n>` in call order, or the caller's own key.
   * Call order must be the same on every replay (as with Temporal's commands): a body that sleeps
   * only on some replays should name its waits.
   */
  nextKey(kind: 'sleep' | 'invoke' | 'signal', own: string | undefined): string {
    if (own !== undefined) return `baton:${kind}:${own}`;
    this.counters ??= new Map();
    const n = (this.counters.get(kind) ?? 0) + 1;
    this.counters.set(kind, n);
    return `baton:${kind}:${n}`;
  }

  /** Counts `work` as in flight: the attempt does not suspend before it settles. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await work();
    } finally {
      this.busy--;
      this.check();
    }
  }

  /** Registers a pending wait; the returned promise never settles (the attempt ends instead). */
  wait(w: DurableWait): Promise<never> {
    this.waits.push(w);
    this.check();
    return new Promise<never>(() => {});
  }

  get pending(): readonly DurableWait[] {
    return this.waits;
  }

  private check(): void {
    if (this.checking || this.settled || this.waits.length === 0) return;
    this.checking = true;
    setImmediate(() => {
      this.checking = false;
      if (this.settled || this.busy > 0 || this.waits.length === 0) return;
      this.settled = true;
      const waits = [...this.waits];
      if (this.onSuspend) this.onSuspend(waits);
      else this.suspendedWith = waits;
    });
  }
}
