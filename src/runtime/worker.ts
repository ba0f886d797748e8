/**
 * The worker: claims runs under leases and executes their attempts, up to its concurrency.
 *
 * It sleeps on one clock timer armed for the earliest of: the next poll (other processes may have
 * queued work), the store's next wake time (a retry backoff ending, a timer row coming due, a lease
 * expiring). In-process changes wake it at once through the store's committed events. Every third
 * of a lease it heartbeats; runs it no longer holds (cancelled, taken over) have their attempt
 * aborted. It recovers expired leases, and at start and on every recovery pass it takes back at
 * once the runs of workers on this host whose process is gone.
 */
import { BatonError, type BatonEvent, serializeError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { TimerHandle } from '../time/index.ts';
import type { Engine } from './engine.ts';
import { executeAttempt } from './execute-attempt.ts';
import { LazyAbort } from './lazy-abort.ts';
import { currentProcess, newWorkerId, type ProcessIdentity } from './process-identity.ts';
import { WorkerChores } from './worker-chores.ts';
import { CLAIM_BATCH, WorkerClaims } from './worker-claims.ts';
import { WorkerHeartbeat } from './worker-heartbeat.ts';
import { ReadyRuns } from './worker-ready-runs.ts';
import type { TimerHandler } from './worker-upkeep.ts';

/** A worker's concurrency, lease and polling settings. */
export interface WorkerOptions {
  /** Attempts running at once in this worker. @default 10 */
  concurrency?: number;
  /** Lease length; a crashed worker's runs are taken over after this. @default 5000 */
  leaseMs?: number;
  /** How often to look for work queued by other processes. @default 250 */
  pollMs?: number;
  /**
   * How often to look while the store delivers wake-up hints from other processes (Postgres
   * LISTEN/NOTIFY): a safety net for a lost hint. @default 5000
   */
  safetyPollMs?: number;
  /** How often to delete expired runs. @default 1 h */
  sweepEveryMs?: number;
}

/** Runs claimed ahead of a free slot (the ready bite), at most. */
const BITE = 16;

/** A due timer's handler; 'keep' leaves the timer taken, to come due again after the store's hold. */
export type { TimerHandler } from './worker-upkeep.ts';

const WAKING_EVENTS = new Set([
  'run:created',
  'run:queued',
  'run:waiting',
  'attempt:retrying',
  'run:resumed',
]);

/** Claims runs from the store and executes their attempts; createBaton starts one unless `worker: false`. */
export class Worker {
  readonly id: string;
  readonly identity: ProcessIdentity;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly safetyPollMs: number;
  private readonly active = new Map<string, { controller: LazyAbort; done: Promise<void> }>();
  private readonly chores: WorkerChores;
  private readonly claims: WorkerClaims;
  private wakeTimer: TimerHandle | undefined;
  private readonly heartbeat: WorkerHeartbeat;
  private stopped = true;
  private ticking = false;
  /** The tick in progress, so stop() lets a send it started finish and be recorded. */
  private tickDone: Promise<void> | undefined;
  private again = false;
  private unsubscribe: (() => void) | undefined;
  private unhint: (() => void) | undefined;
  /**
   * Attempts whose body is over and whose end is being recorded. Their slot is claimed again at
   * once: the claim goes into the write queue beside the end's write, so one commit and one WAL sync
   * serve both, instead of the claim waiting for the end's sync and then for its own.
   */
  private readonly ending = new Set<string>();
  /** Runs claimed ahead of a free slot, started a bite per turn as slots free. */
  private readonly ready: ReadyRuns;
  private readonly prefetch: number;

  constructor(
    private readonly engine: Engine,
    options: WorkerOptions = {},
  ) {
    this.identity = currentProcess();
    this.id = newWorkerId(this.identity);
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 10));
    this.leaseMs = Math.max(100, options.leaseMs ?? 5_000);
    this.pollMs = Math.max(1, options.pollMs ?? 250);
    this.safetyPollMs = Math.max(this.pollMs, options.safetyPollMs ?? 5_000);
    this.chores = new WorkerChores(engine, {
      self: this.id,
      host: this.identity.host,
      leaseMs: this.leaseMs,
      sweepEveryMs: options.sweepEveryMs ?? 3_600_000,
      pollMs: () => this.currentPollMs,
      stopped: () => this.stopped,
    });
    this.prefetch = Math.min(this.concurrency, BITE);
    this.ready = new ReadyRuns({
      stopped: () => this.stopped,
      hasRoom: () => this.busy < this.concurrency,
      launch: (run) => this.launch(run),
    });
    this.claims = new WorkerClaims(engine, {
      id: this.id,
      leaseMs: this.leaseMs,
      stopped: () => this.stopped,
      holds: (runId) => this.active.has(runId) || this.ready.has(runId),
      claimedAgain: (runId, reason) => {
        this.ending.delete(runId);
        this.lose(runId, reason);
      },
      claimed: (runs) => this.heartbeat.claimed(runs),
      launch: (run) => this.launch(run),
      wake: () => this.wake(),
    });
    this.heartbeat = new WorkerHeartbeat(engine, {
      id: this.id,
      leaseMs: this.leaseMs,
      safetyPollMs: this.safetyPollMs,
      held: () => [...this.active.keys(), ...this.ready.ids()],
      claiming: () => this.claims.offeredCount > 0,
      stopped: () => this.stopped,
      lose: (runId, reason) => this.lose(runId, reason),
    });
  }

  get running(): number {
    return this.active.size;
  }

  /** Slots taken: attempts whose body runs or is about to (claims offered), not those ending. */
  private get busy(): number {
    return this.active.size - this.ending.size + this.claims.offeredCount;
  }

  /** How many more runs to claim: the free slots and the ready bite. */
  private get wanted(): number {
    return this.concurrency + this.prefetch - this.busy - this.ready.length;
  }

  onTimer(kind: string, handler: TimerHandler): void {
    this.chores.onTimer(kind, handler);
  }

  /** Work to do whenever the worker looks at what is due (e.g. sending queued deliveries). */
  onDue(fn: () => Promise<unknown>): void {
    this.chores.onDue(fn);
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    const now = this.engine.clock.now();
    // Registered in the same commit as the recovery and the first claim below (all asked for in
    // this turn; the store applies them in that order).
    const registered = this.engine.store.registerWorker({
      id: this.id,
      ...this.identity,
      startedAt: now,
      heartbeatAt: now,
    });
    this.unsubscribe = this.engine.store.onEvents((events) => this.onCommitted(events));
    // Another process made work claimable or due (a hint; the polls below remain the truth).
    // It does not take due timers on a hint: sent with them, the claim shared the timer take's
    // message and commit and went unprepared (planned each time), which was most of enqueue →
    // start across processes. A timer or delivery another process wrote is found by the next wake
    // time read after this tick (armWake), and taken when it comes due.
    this.unhint = this.engine.store.onWake?.((channel) => {
      if (channel === 'work') this.wake();
    });
    // The first tick (its chores and its claim) is asked for the moment the recovery's writes are
    // queued, in the same turn: it joins their commit and, coming after them, claims the runs they
    // hand back. A dead worker's run thus starts again after ONE durable commit, not after the
    // recovery's and then the claim's (issue 18 item 4). Fencing is unchanged: the claim bumps
    // each run's lease token as before, only inside the same transaction as the release.
    await Promise.all([
      registered,
      this.chores.recover(() => {
        this.heartbeat.start();
        this.wake();
      }),
    ]);
  }

  /**
   * Claims runs this process has just made claimable, if there is room, in the same commit as the
   * write that made them claimable (WorkerClaims.offer). Anything not taken here is claimed the usual way.
   */
  offer(runIds: readonly string[]): void {
    if (this.stopped) return;
    this.claims.offer(runIds, this.concurrency - this.busy);
  }

  /** Aborts the attempt of a run this worker is executing (cancel, lost lease). */
  abortRun(runId: string, reason: unknown): boolean {
    const a = this.active.get(runId);
    if (!a) return false;
    a.controller.abort(reason);
    return true;
  }

  /** The worker no longer holds the run (lease lost, cancelled): abort it, or drop it unstarted. */
  private lose(runId: string, reason: BatonError): void {
    this.abortRun(runId, reason);
    if (!this.ready.remove(runId)) return;
    // Never started, so no attempt's end will forget its lease.
    this.heartbeat.forget(runId);
  }

  /** Resolves when no attempt is running in this worker. */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((a) => a.done));
  }

  isRunning(runId: string): boolean {
    return this.active.has(runId);
  }

  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.engine.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
    this.tickDone = this.tick();
  }

  private onCommitted(events: readonly BatonEvent[]): void {
    for (const e of events) {
      if (e.type === 'run:cancelled')
        this.lose(e.runId, new BatonError('CANCELLED', `run ${e.runId} was cancelled`));
    }
    // Deliveries were queued with these: send them now rather than at the next poll.
    if (events.some((e) => e.type === 'tool:result' || e.type === 'tool:choice')) {
      this.chores.markDue();
      this.wake();
    }
    // A run offered to this worker is being claimed in the very commit that queued it: no wake-up.
    else if (events.some((e) => WAKING_EVENTS.has(e.type) && !this.claims.isOffered(e.runId))) this.wake();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      do {
        this.again = false;
        // Chores and the claim go out together and share a commit: a resumed or newly queued run
        // is not kept waiting behind a timer check. What the chores free up wakes the loop again.
        const chores = this.chores.run();
        // Awaited below, after the claim; this only keeps an early failure from counting as unhandled.
        chores.catch(() => {});
        const wanted = this.wanted;
        // Runs held ready cover the slots freeing meanwhile: a claim for a few more now (the room
        // left right after a claim's runs launched) would take the claim slot, and the attempts
        // ending next would wait for it before claiming a bite. Those ends wake the tick again.
        if (wanted > 0 && !(this.ready.length > 0 && wanted * 2 < this.prefetch)) {
          // As many as the store takes well in one claim (Store.claimBatch); the ready runs start
          // a bite per turn of the event loop.
          const limit = Math.min(wanted, this.engine.store.claimBatch ?? CLAIM_BATCH);
          const claimed = await this.claims.claim(limit);
          // Taken before the attempts below queue their first write, so it comes before the turn
          // that commits them: the next claim is sized after the bodies that end at once (no-op
          // runs) freed their slots, and still joins that commit.
          const beforeTheirCommit = new Promise<void>((resolve) => setImmediate(resolve));
          this.ready.add(claimed);
          this.ready.launch();
          if (claimed.length === limit) {
            this.again = true;
            await beforeTheirCommit;
          }
        }
        await chores;
      } while (this.again && !this.stopped && this.wanted > 0);
    } catch (err) {
      this.engine.logger.error({ err: serializeError(err) }, 'worker tick failed; retrying at the next poll');
    } finally {
      this.ticking = false;
    }
    if (!this.stopped) await this.armWake();
  }

  private launch(run: RunRecord): void {
    this.ready.noteLaunched();
    const controller = new LazyAbort();
    const ending = () => {
      this.ending.add(run.id);
      this.ready.launch();
      this.wake();
      return this.ready.afterBurst();
    };
    const done = executeAttempt(this.engine, run, this.id, controller, ending, this.claims.nameOf(run))
      .catch((err: unknown) => {
        this.engine.logger.error({ runId: run.id, err: serializeError(err) }, 'attempt crashed');
      })
      .finally(() => {
        // Unless the run was claimed again meanwhile and another attempt of it runs (claim()).
        if (this.active.get(run.id)?.controller === controller) {
          this.active.delete(run.id);
          this.ending.delete(run.id);
          this.heartbeat.forget(run.id);
        }
        this.ready.launch();
        this.wake();
      });
    this.active.set(run.id, { controller, done });
  }

  /** The poll interval now: slow while hints from other processes arrive. */
  private get currentPollMs(): number {
    return this.engine.store.hinting ? this.safetyPollMs : this.pollMs;
  }

  private async armWake(): Promise<void> {
    let delay = this.currentPollMs;
    try {
      const next = await this.engine.store.nextWakeAt(this.engine.delivery.routes);
      if (next !== undefined) delay = Math.min(delay, Math.max(0, next - this.engine.clock.now()));
    } catch {
      // The store may be closing; the poll interval still applies.
    }
    if (this.stopped) return;
    this.engine.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = this.engine.clock.setTimer(delay, () => {
      this.wakeTimer = undefined;
      this.chores.markDue();
      this.wake();
    });
  }

  /** Stops claiming, interrupts running attempts, waits for them, and hands their runs back. */
  async stop(reason = 'worker stopping'): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.engine.clock.clearTimer(this.wakeTimer);
    this.heartbeat.stop();
    this.unsubscribe?.();
    await this.tickDone;
    this.unhint?.();
    // A claim offered just before stopping lands unlaunched; the release below hands it back.
    await this.claims.landed();
    // Claimed but never started: handed back with the rest below.
    this.ready.clear();
    for (const a of this.active.values()) a.controller.abort(new BatonError('CANCELLED', reason));
    await Promise.all([...this.active.values()].map((a) => a.done));
    await this.engine.store.releaseOwners([this.id], 'released');
    await this.engine.store.removeWorkers([this.id]);
  }
}
