/**
 * The runs a worker holds claimed and not started yet, and how they start: while slots are free, a
 * bite (CLAIM_BATCH) per turn of the event loop. A claim may hand over a thousand runs at once
 * (Store.claimBatch), and starting them all in one go would hold the loop for tens of milliseconds,
 * every deadline due meanwhile firing late.
 */
import type { RunRecord } from '../store/index.ts';
import { loopLane } from '../time/index.ts';
import { CLAIM_BATCH } from './worker-claims.ts';

/** What starting held runs needs of its worker. */
export interface ReadyRunsHost {
  stopped(): boolean;
  /** A slot is free for one more attempt. */
  hasRoom(): boolean;
  /** Starts the attempt of a held run. */
  launch(run: RunRecord): void;
}

export class ReadyRuns {
  /**
   * Runs claimed ahead of a free slot (at most one bite), launched the moment a slot frees: a slot's
   * next run does not wait for a claim's commit and WAL sync, which overlap the running bodies.
   */
  private readonly runs: RunRecord[] = [];
  /** A later turn will start more held runs (launch). */
  private launchPending = false;
  /**
   * A burst of held runs being started a bite per turn: attempts that end meanwhile record their
   * ends once every run of the burst has started, each on a turn of the loop's lane.
   */
  private burst: { started: Promise<void>; resolve: () => void; until: number } | undefined;
  /** Claims in flight whose runs the burst waits for (hold). */
  private coming = 0;
  /** Attempts started so far (where a burst ends). */
  private launched = 0;

  constructor(private readonly host: ReadyRunsHost) {}

  get length(): number {
    return this.runs.length;
  }

  ids(): string[] {
    return this.runs.map((r) => r.id);
  }

  has(runId: string): boolean {
    return this.runs.some((r) => r.id === runId);
  }

  add(runs: readonly RunRecord[]): void {
    this.runs.push(...runs);
  }

  /** Drops a held run (its lease is lost); false if it is not held. */
  remove(runId: string): boolean {
    const held = this.runs.findIndex((r) => r.id === runId);
    if (held < 0) return false;
    this.runs.splice(held, 1);
    return true;
  }

  clear(): void {
    this.runs.length = 0;
  }

  /** An attempt started (held or not): counted to know where a burst ends. */
  noteLaunched(): void {
    this.launched++;
  }

  /** For an attempt ending now: resolves when it may record its end (after the burst), if it must wait. */
  afterBurst(): Promise<void> | undefined {
    return this.burst?.started.then(() => loopLane.turn());
  }

  /**
   * A claim in flight whose runs join the burst (the worker's claim ahead): ends wait for its runs
   * to start too, so its statement does not queue at the server behind a burst of end writes.
   */
  hold(claim: Promise<readonly RunRecord[]>): void {
    this.coming++;
    this.openBurst();
    void claim
      .then(
        (runs) => {
          if (this.burst) this.burst.until += runs.length;
        },
        () => {},
      )
      .finally(() => {
        this.coming--;
        this.settleBurst();
      });
  }

  /** Starts held runs while slots are free, a bite (CLAIM_BATCH) per turn of the event loop. */
  launch(): void {
    // A bite was started this turn and more wait for a later one: an attempt ending meanwhile (a
    // slot freeing) must not start another bite now.
    if (this.launchPending) return;
    for (let n = 0; !this.host.stopped() && this.runs.length > 0 && this.host.hasRoom(); n++) {
      if (n === CLAIM_BATCH) {
        this.launchLater();
        break;
      }
      this.host.launch(this.runs.shift() as RunRecord);
    }
    this.settleBurst();
  }

  private launchLater(): void {
    this.launchPending = true;
    this.openBurst();
    void loopLane.turn().then(() => {
      this.launchPending = false;
      this.launch();
    });
  }

  private openBurst(): void {
    if (this.burst) return;
    let resolve!: () => void;
    const started = new Promise<void>((r) => {
      resolve = r;
    });
    // Only the runs held now (and those of claims held): runs claimed later do not keep these ends waiting.
    this.burst = { started, resolve, until: this.launched + this.runs.length };
  }

  /** Ends the burst once its runs have started (or wait for a slot) and no claim it holds is out. */
  private settleBurst(): void {
    const burst = this.burst;
    if (!burst || this.coming > 0) return;
    if (this.launchPending && this.launched < burst.until) return;
    this.burst = undefined;
    burst.resolve();
  }
}
