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
import { randomUUID } from 'node:crypto';
import { BatonError, type BatonEvent, serializeError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import { loopLane, type TimerHandle } from '../time/index.ts';
import type { Engine } from './engine.ts';
import { executeAttempt } from './execute-attempt.ts';
import { currentProcess, newWorkerId, type ProcessIdentity } from './process-identity.ts';
import { WorkerChores } from './worker-chores.ts';
import { WorkerHeartbeat } from './worker-heartbeat.ts';
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

/**
 * Runs claimed per store call unless the store says otherwise (Store.claimBatch), and runs started
 * per turn of the event loop. A worker with more free slots claims again at once. Each call waits
 * for its commit's WAL sync before the next, so with bites of 16 a burst of due runs (1,000 due at
 * once at concurrency 50) went through ~65 claims in turn, each a sync apart; 64 fills a worker of
 * up to 48 slots (plus its ready bite) in one (issue 18 item 2). Starting 64 attempts holds the loop
 * for a few milliseconds; a thousand in one go held it for tens, so it stays bounded.
 */
const CLAIM_BATCH = 64;

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
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly chores: WorkerChores;
  private wakeTimer: TimerHandle | undefined;
  private readonly heartbeat: WorkerHeartbeat;
  private stopped = true;
  private ticking = false;
  /** The tick in progress, so stop() lets a send it started finish and be recorded. */
  private tickDone: Promise<void> | undefined;
  private again = false;
  private unsubscribe: (() => void) | undefined;
  private unhint: (() => void) | undefined;
  /** Runs being claimed through `offer`, counted against the concurrency until they launch. */
  private readonly offered = new Set<string>();
  /**
   * Attempts whose body is over and whose end is being recorded. Their slot is claimed again at
   * once: the claim goes into the write queue beside the end's write, so one commit and one WAL sync
   * serve both, instead of the claim waiting for the end's sync and then for its own.
   */
  private readonly ending = new Set<string>();
  /**
   * Runs claimed ahead of a free slot (at most one bite), launched the moment a slot frees: a slot's
   * next run does not wait for a claim's commit and WAL sync, which overlap the running bodies.
   */
  private readonly ready: RunRecord[] = [];
  private readonly prefetch: number;
  private readonly offers = new Set<Promise<void>>();
  /** Runs offered in this turn so far, claimed together once the turn's synchronous work is done. */
  private offerBatch: string[] = [];
  /** A later turn will start more held runs (launchReady). */
  private launchPending = false;
  /**
   * A burst of held runs being started a bite per turn: attempts that end meanwhile record their
   * ends once every run of the burst has started, each on a turn of the loop's lane.
   */
  private burst: { started: Promise<void>; resolve: () => void; until: number } | undefined;
  /** Attempts started so far (where a burst ends). */
  private launched = 0;
  /** The name of the claim that gave each claimed run its lease (ClaimRequest.claim). */
  private readonly claims = new WeakMap<RunRecord, string>();

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
    this.heartbeat = new WorkerHeartbeat(engine, {
      id: this.id,
      leaseMs: this.leaseMs,
      safetyPollMs: this.safetyPollMs,
      held: () => [...this.active.keys(), ...this.ready.map((r) => r.id)],
      claiming: () => this.offered.size > 0,
      stopped: () => this.stopped,
      lose: (runId, reason) => this.lose(runId, reason),
    });
  }

  get running(): number {
    return this.active.size;
  }

  /** Slots taken: attempts whose body runs or is about to (claims offered), not those ending. */
  private get busy(): number {
    return this.active.size - this.ending.size + this.offered.size;
  }

  /** How many more runs to claim: the free slots and the ready bite. */
  private get wanted(): number {
    return this.concurrency + this.prefetch - this.busy - this.ready.length;
  }

  /**
   * Starts held runs while slots are free, a bite (CLAIM_BATCH) per turn of the event loop: a
   * claim may hand over a thousand runs at once (Store.claimBatch), and starting them all in one
   * go would hold the loop for tens of milliseconds, every deadline due meanwhile firing late.
   */
  private launchReady(): void {
    // A bite was started this turn and more wait for a later one: an attempt ending meanwhile (a
    // slot freeing) must not start another bite now.
    if (this.launchPending) return;
    for (let n = 0; !this.stopped && this.ready.length > 0 && this.busy < this.concurrency; n++) {
      if (n === CLAIM_BATCH) {
        this.launchLater();
        return;
      }
      this.launch(this.ready.shift() as RunRecord);
    }
  }

  private launchLater(): void {
    if (this.launchPending) return;
    this.launchPending = true;
    if (!this.burst) {
      let resolve!: () => void;
      const started = new Promise<void>((r) => {
        resolve = r;
      });
      // Only the runs held now: runs claimed later do not keep these ends waiting.
      this.burst = { started, resolve, until: this.launched + this.ready.length };
    }
    void loopLane.turn().then(() => {
      this.launchPending = false;
      this.launchReady();
      const burst = this.burst;
      if (burst && (!this.launchPending || this.launched >= burst.until)) {
        this.burst = undefined;
        burst.resolve();
      }
    });
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
   * Claims runs this process has just made claimable, if there is room: the claim is queued in the
   * same turn as the write that made them claimable, so both share one commit. Anything not taken
   * here is claimed the usual way. Runs offered in one turn (a thousand `start` calls in a loop) go
   * into ONE claim, queued from a microtask: a claim per run cost ~0.25 ms of the loop each (its
   * savepoint and three statements), which made the claims most of what such a burst did.
   */
  offer(runIds: readonly string[]): void {
    if (this.stopped) return;
    // At most one claim batch offered at a time: its attempts start together when it commits.
    const room = Math.min(this.concurrency - this.busy, CLAIM_BATCH - this.offered.size);
    const ids = runIds.slice(0, Math.max(0, room));
    if (ids.length === 0) return;
    for (const id of ids) this.offered.add(id);
    // A microtask still runs in this turn, before the write queue's flush: same commit as the writes.
    if (this.offerBatch.length === 0) queueMicrotask(() => this.claimOffered());
    this.offerBatch.push(...ids);
  }

  private claimOffered(): void {
    const ids = this.offerBatch;
    this.offerBatch = [];
    if (this.stopped) {
      for (const id of ids) this.offered.delete(id);
      return;
    }
    const claiming = this.claim(ids.length, ids)
      .then(
        (claimed) => {
          for (const run of claimed) if (!this.stopped) this.launch(run);
          // Not claimable after all (a task limit, a wake time): the usual claim looks again.
          if (claimed.length < ids.length) this.wake();
        },
        (err: unknown) => {
          this.engine.logger.warn({ err: serializeError(err).message }, 'claiming offered runs failed');
          this.wake();
        },
      )
      .finally(() => {
        for (const id of ids) this.offered.delete(id);
        this.offers.delete(claiming);
      });
    this.offers.add(claiming);
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
    const held = this.ready.findIndex((r) => r.id === runId);
    if (held < 0) return;
    // Never started, so no attempt's end will forget its lease.
    this.ready.splice(held, 1);
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
    else if (events.some((e) => WAKING_EVENTS.has(e.type) && !this.offered.has(e.runId))) this.wake();
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
          // As many as the store takes well in one claim (Store.claimBatch); launchReady starts
          // them a bite per turn of the event loop.
          const limit = Math.min(wanted, this.engine.store.claimBatch ?? CLAIM_BATCH);
          const claimed = await this.claim(limit);
          // Taken before the attempts below queue their first write, so it comes before the turn
          // that commits them: the next claim is sized after the bodies that end at once (no-op
          // runs) freed their slots, and still joins that commit.
          const beforeTheirCommit = new Promise<void>((resolve) => setImmediate(resolve));
          this.ready.push(...claimed);
          this.launchReady();
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

  /**
   * Claims up to `limit` runs of the tasks this worker knows (only `ids`, when given), under a claim
   * name no other claim has: its attempts' fences carry it (Fence.claim), so a claim the store lost
   * in a crash (Postgres answers before its commit is durable) cannot be repeated with their fence.
   */
  private claim(limit: number, ids?: readonly string[]): Promise<RunRecord[]> {
    const claim = randomUUID();
    return this.engine.store
      .claimRuns({
        owner: this.id,
        leaseMs: this.leaseMs,
        limit,
        names: this.engine.tasks.names(),
        nameLimits: this.engine.tasks.limits(),
        ...(ids ? { ids } : {}),
        claim,
      })
      .then((runs) => {
        for (const run of runs) {
          // A run this worker already holds, claimed again: the store lost the earlier claim (a
          // crash), and that attempt's writes are refused from now on. It stops; this one runs.
          if (this.active.has(run.id) || this.ready.some((r) => r.id === run.id)) {
            this.ending.delete(run.id);
            this.lose(
              run.id,
              new BatonError(
                'LEASE_LOST',
                `run ${run.id} was claimed again by ${this.id}; the earlier claim was lost`,
              ),
            );
          }
          this.claims.set(run, claim);
        }
        this.heartbeat.claimed(runs);
        return runs;
      });
  }

  private launch(run: RunRecord): void {
    this.launched++;
    const controller = new AbortController();
    const ending = () => {
      this.ending.add(run.id);
      this.launchReady();
      this.wake();
      return this.burst?.started.then(() => loopLane.turn());
    };
    const done = executeAttempt(this.engine, run, this.id, controller, ending, this.claims.get(run))
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
        this.launchReady();
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
    await Promise.all(this.offers);
    // Claimed but never started: handed back with the rest below.
    this.ready.length = 0;
    for (const a of this.active.values()) a.controller.abort(new BatonError('CANCELLED', reason));
    await Promise.all([...this.active.values()].map((a) => a.done));
    await this.engine.store.releaseOwners([this.id], 'released');
    await this.engine.store.removeWorkers([this.id]);
  }
}
