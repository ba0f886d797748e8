/**
 * What a worker does besides claiming and executing: taking back the runs of dead workers and
 * expired leases, sweeping expired runs, handling due timer rows and the due hooks (sending queued
 * deliveries). The worker asks for these at every tick, beside its claim, so both share a commit;
 * each chore decides here whether it is due.
 */
import { serializeError } from '../core/index.ts';
import type { Engine } from './engine.ts';
import { handleDueTimers, type TimerHandler, takeBackRuns } from './worker-upkeep.ts';

/** Sweep slices (1 ms each) per housekeeping tick while expired runs remain: ≈ 1,000+ trees a second. */
const SWEEPS_PER_TICK = 32;

export interface ChoreSettings {
  /** The worker's id and host: its own registration is never taken back. */
  self: string;
  host: string;
  leaseMs: number;
  sweepEveryMs: number;
  /** The poll interval now (slower while the store delivers hints). */
  pollMs: () => number;
  /** True once the worker stops: a sweep backlog is not worked off past that. */
  stopped: () => boolean;
}

export class WorkerChores {
  private readonly timerHandlers = new Map<string, TimerHandler>();
  private readonly dueHooks: Array<() => Promise<unknown>> = [];
  private lastRecovery = Number.NEGATIVE_INFINITY;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private lastTimerCheck = Number.NEGATIVE_INFINITY;
  /** Something may have come due (the wake timer fired): look at timer rows now. */
  private timerDue = true;

  constructor(
    private readonly engine: Engine,
    private readonly settings: ChoreSettings,
  ) {}

  onTimer(kind: string, handler: TimerHandler): void {
    this.timerHandlers.set(kind, handler);
  }

  onDue(fn: () => Promise<unknown>): void {
    this.dueHooks.push(fn);
  }

  /** The next run looks at timer rows and due work whatever the poll interval says. */
  markDue(): void {
    this.timerDue = true;
  }

  /** The chores that are due now. */
  async run(): Promise<void> {
    const now = this.engine.clock.now();
    const { leaseMs, sweepEveryMs } = this.settings;
    // The wake timer fires when the earliest lease expires; half a lease keeps recovery prompt.
    if (now - this.lastRecovery >= leaseMs / 2) await this.recover();
    if (now - this.lastSweep >= sweepEveryMs) await this.sweep(now);
    // Timer rows are looked at when the wake timer fired (something came due) or once a poll.
    if (!this.timerDue && now - this.lastTimerCheck < this.settings.pollMs()) return;
    this.timerDue = false;
    this.lastTimerCheck = now;
    await handleDueTimers(this.engine, this.timerHandlers);
    for (const hook of this.dueHooks)
      await hook().catch((err: unknown) =>
        this.engine.logger.error({ err: serializeError(err) }, 'due work failed'),
      );
  }

  /**
   * Takes back runs of gone processes on this host at once, and expired leases everywhere.
   * `queued` is called in the turn its writes are queued (before they commit).
   */
  async recover(queued?: () => void): Promise<void> {
    this.lastRecovery = this.engine.clock.now();
    await takeBackRuns(this.engine, this.settings.self, this.settings.host, queued);
  }

  /**
   * Each sweep holds the store's writes for about one sweep slice (on SQLite it runs on its own
   * thread, off the loop); a backlog is worked off a few slices per tick (each its own commit, so
   * claims and deadlines get turns in between), and the sweep counts as done only when nothing
   * expired is left.
   */
  private async sweep(now: number): Promise<void> {
    for (let i = 0; i < SWEEPS_PER_TICK && !this.settings.stopped(); i++) {
      if ((await this.engine.store.sweep()).runs === 0) {
        this.lastSweep = now;
        return;
      }
    }
  }
}
