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

  /** Starts held runs while slots are free, a bite (CLAIM_BATCH) per turn of the event loop. */
  launch(): void {
    // A bite was started this turn and more wait for a later one: an attempt ending meanwhile (a
    // slot freeing) must not start another bite now.
    if (this.launchPending) return;
    for (let n = 0; !this.host.stopped() && this.runs.length > 0 && this.host.hasRoom(); n++) {
      if (n === CLAIM_BATCH) {
        this.launchLater();
        return;
      }
      this.host.launch(this.runs.shift() as RunRecord);
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
      this.burst = { started, resolve, until: this.launched + this.runs.length };
    }
    void loopLane.turn().then(() => {
      this.launchPending = false;
      this.launch();
      const burst = this.burst;
      if (burst && (!this.launchPending || this.launched >= burst.until)) {
        this.burst = undefined;
        burst.resolve();
      }
    });
  }
}
