/**
 * The only place Baton reads the system clock or arms real timers. Everything else takes a `Clock`,
 * so tests drive time with `ManualClock` and never sleep for the behaviour they check.
 */

export interface TimerHandle {
  readonly id: number;
}

/** The source of time: Baton reads time and arms timers only through a Clock (ManualClock in tests). */
export interface Clock {
  /** Wall time, epoch milliseconds. Stored in records; may jump. */
  now(): number;
  /** Monotonic milliseconds for measuring elapsed time inside one process. */
  monotonic(): number;
  /** Calls `fn` once after `ms` (clamped to ≥ 0). */
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle | undefined): void;
  /** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * How soon the earliest timer armed through this clock is due (≤ 0: overdue; Infinity: none).
   * Work that holds the event loop (a commit, a lane's slice) stops before it. A clock whose timers
   * do not fire by real time (ManualClock) leaves it out: there is no real deadline to protect.
   */
  msUntilNextTimer?(): number;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimer(handle);
      reject(abortReason(signal as AbortSignal));
    };
    const handle = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

import { DueHeap } from './due-heap.ts';

// Node's setTimeout overflows above 2^31-1 ms and fires at once; chain shorter timers instead.
const MAX_NODE_TIMER_MS = 2_147_483_647;

/**
 * A live timer: its Node handle, when it is due (monotonic ms) and what it calls. It is also the
 * handle `setTimer` returns, and Node's timeout calls `fireTimer` with it as an argument: no
 * closures per timer, which every attempt arms and a thousand may hold at once.
 */
interface LiveTimer extends TimerHandle {
  timeout: NodeJS.Timeout | undefined;
  due: number;
  fn: () => void;
  /** The delay the Node timeout was armed with (MAX_NODE_TIMER_MS for a link of a long chain). */
  delay: number;
}

function armTimer(clock: SystemClock, t: LiveTimer, delay: number): void {
  t.delay = Math.min(Math.max(0, delay), MAX_NODE_TIMER_MS);
  t.timeout = setTimeout(fireTimer, t.delay, clock, t);
}

function fireTimer(clock: SystemClock, t: LiveTimer): void {
  const left = t.due - performance.now();
  if (left > 1 && t.delay === MAX_NODE_TIMER_MS) {
    armTimer(clock, t, left);
    return;
  }
  clock.forget(t.id);
  t.fn();
}

class SystemClock implements Clock {
  private nextId = 1;
  private readonly live = new Map<number, LiveTimer>();
  /**
   * Due times of armed timers, earliest first, so cooperative work can tell how long it may run
   * before a deadline needs the event loop. Cleared and fired timers leave lazily.
   */
  private readonly dueHeap = new DueHeap();

  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return performance.now();
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const t: LiveTimer = {
      id: this.nextId++,
      timeout: undefined,
      due: performance.now() + Math.max(0, ms),
      fn,
      delay: 0,
    };
    armTimer(this, t, ms);
    this.live.set(t.id, t);
    this.dueHeap.push(t.id, t.due);
    if (this.dueHeap.size > 2 * this.live.size + 64) this.dueHeap.rebuild(this.live);
    return t;
  }

  forget(id: number): void {
    this.live.delete(id);
  }

  clearTimer(handle: TimerHandle | undefined): void {
    if (!handle) return;
    const t = this.live.get(handle.id);
    if (t) clearTimeout(t.timeout);
    this.live.delete(handle.id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Milliseconds until the earliest armed timer is due (≤ 0: overdue), Infinity when none is. */
  msUntilNextTimer(): number {
    const due = this.dueHeap.earliest(this.live);
    return due === undefined ? Number.POSITIVE_INFINITY : due - performance.now();
  }
}

const theSystemClock = new SystemClock();
/** The real clock, used unless a clock is given. */
export const systemClock: Clock = theSystemClock;

/**
 * How long until a timer armed through the system clock is due; Infinity when none is. The lane
 * and the store's write queue use it to yield to the event loop before a deadline, not after.
 */
export function msUntilNextTimer(): number {
  return theSystemClock.msUntilNextTimer();
}

interface ManualTimer {
  id: number;
  due: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when a test says so. `advance` fires due timers in due order (ties in
 * the order they were armed) and lets promise continuations run between them, so code awaiting a
 * timer sees the time at which that timer was due.
 */
export class ManualClock implements Clock {
  private current: number;
  private mono = 0;
  private nextId = 1;
  private seq = 0;
  private timers: ManualTimer[] = [];

  constructor(start: number | string | Date = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : new Date(start).getTime();
    if (!Number.isFinite(this.current))
      throw new TypeError(`ManualClock start is not a time: ${String(start)}`);
  }

  now(): number {
    return this.current;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    this.timers.push({ id, due: this.mono + Math.max(0, ms), seq: this.seq++, fn });
    return { id };
  }

  clearTimer(handle: TimerHandle | undefined): void {
    if (!handle) return;
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of armed timers (handy for asserting that nothing is left waiting). */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** The monotonic delay until the earliest armed timer, or undefined. */
  nextTimerIn(): number | undefined {
    const next = this.earliest();
    return next ? next.due - this.mono : undefined;
  }

  /** Moves time forward by `ms`, firing every timer that comes due on the way. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`advance(ms) needs ms ≥ 0, got ${ms}`);
    const target = this.mono + ms;
    for (;;) {
      await settle();
      const next = this.earliest();
      if (!next || next.due > target) break;
      this.moveTo(next.due);
      this.timers = this.timers.filter((t) => t !== next);
      next.fn();
    }
    this.moveTo(target);
    await settle();
  }

  /** Advances to the earliest armed timer and fires it (and any due at the same moment). */
  async runNext(): Promise<boolean> {
    const wait = this.nextTimerIn();
    if (wait === undefined) return false;
    await this.advance(wait);
    return true;
  }

  /** Sets the wall clock without moving monotonic time (a clock jump, e.g. NTP). */
  setWallTime(epochMs: number): void {
    this.current = epochMs;
  }

  private moveTo(mono: number): void {
    this.current += mono - this.mono;
    this.mono = mono;
  }

  private earliest(): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.timers) {
      if (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets pending promise continuations and I/O callbacks run (a few macrotask turns). */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((r) => setImmediate(r));
}
