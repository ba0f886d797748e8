/**
 * How a worker claims runs: each claim under a name no other claim has (its attempts' fences carry
 * it), and the runs this process has just made claimable (`offer`) gathered into one claim a turn.
 */
import { randomUUID } from 'node:crypto';
import { BatonError, serializeError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { Engine } from './engine.ts';

/**
 * Runs claimed per store call unless the store says otherwise (Store.claimBatch), and runs started
 * per turn of the event loop. A worker with more free slots claims again at once. Each call waits
 * for its commit's WAL sync before the next, so with bites of 16 a burst of due runs (1,000 due at
 * once at concurrency 50) went through ~65 claims in turn, each a sync apart; 64 fills a worker of
 * up to 48 slots (plus its ready bite) in one (issue 18 item 2). Starting 64 attempts holds the loop
 * for a few milliseconds; a thousand in one go held it for tens, so it stays bounded.
 */
export const CLAIM_BATCH = 64;

/** What claiming needs of its worker. */
export interface ClaimsHost {
  readonly id: string;
  readonly leaseMs: number;
  stopped(): boolean;
  /** The worker holds this run already: its attempt runs, or it is claimed ahead. */
  holds(runId: string): boolean;
  /** A run the worker holds was claimed again: the earlier claim was lost, its attempt stops. */
  claimedAgain(runId: string, reason: BatonError): void;
  /** Runs just claimed, before the claim answers (their leases end when it set them to). */
  claimed(runs: readonly RunRecord[]): void;
  /** Starts the attempt of a run an offered claim took. */
  launch(run: RunRecord): void;
  wake(): void;
}

export class WorkerClaims {
  /** Runs being claimed through `offer`, counted against the concurrency until they launch. */
  private readonly offered = new Set<string>();
  private readonly offers = new Set<Promise<void>>();
  /** Runs offered in this turn so far, claimed together once the turn's synchronous work is done. */
  private offerBatch: string[] = [];
  /** The name of the claim that gave each claimed run its lease (ClaimRequest.claim). */
  private readonly names = new WeakMap<RunRecord, string>();

  constructor(
    private readonly engine: Engine,
    private readonly host: ClaimsHost,
  ) {}

  /** Runs offered and not launched yet. */
  get offeredCount(): number {
    return this.offered.size;
  }

  isOffered(runId: string): boolean {
    return this.offered.has(runId);
  }

  /** The name of the claim that took this run (its attempt's fence carries it). */
  nameOf(run: RunRecord): string | undefined {
    return this.names.get(run);
  }

  /** Resolves once every offered claim has landed (launched, or left to be handed back). */
  landed(): Promise<unknown> {
    return Promise.all(this.offers);
  }

  /**
   * Claims runs this process has just made claimable, up to `free` of them: the claim is queued in
   * the same turn as the write that made them claimable, so both share one commit. Anything not
   * taken here is claimed the usual way. Runs offered in one turn (a thousand `start` calls in a
   * loop) go into ONE claim, queued from a microtask: a claim per run cost ~0.25 ms of the loop each
   * (its savepoint and three statements), which made the claims most of what such a burst did.
   */
  offer(runIds: readonly string[], free: number): void {
    // At most one claim batch offered at a time: its attempts start together when it commits.
    const room = Math.min(free, CLAIM_BATCH - this.offered.size);
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
    if (this.host.stopped()) {
      for (const id of ids) this.offered.delete(id);
      return;
    }
    const claiming = this.claim(ids.length, ids)
      .then(
        (claimed) => {
          for (const run of claimed) if (!this.host.stopped()) this.host.launch(run);
          // Not claimable after all (a task limit, a wake time): the usual claim looks again.
          if (claimed.length < ids.length) this.host.wake();
        },
        (err: unknown) => {
          this.engine.logger.warn({ err: serializeError(err).message }, 'claiming offered runs failed');
          this.host.wake();
        },
      )
      .finally(() => {
        for (const id of ids) this.offered.delete(id);
        this.offers.delete(claiming);
      });
    this.offers.add(claiming);
  }

  /**
   * Claims up to `limit` runs of the tasks this worker knows (only `ids`, when given), under a claim
   * name no other claim has: its attempts' fences carry it (Fence.claim), so a claim the store lost
   * in a crash (Postgres answers before its commit is durable) cannot be repeated with their fence.
   */
  claim(limit: number, ids?: readonly string[]): Promise<RunRecord[]> {
    const claim = randomUUID();
    return this.engine.store
      .claimRuns({
        owner: this.host.id,
        leaseMs: this.host.leaseMs,
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
          if (this.host.holds(run.id))
            this.host.claimedAgain(
              run.id,
              new BatonError(
                'LEASE_LOST',
                `run ${run.id} was claimed again by ${this.host.id}; the earlier claim was lost`,
              ),
            );
          this.names.set(run, claim);
        }
        this.host.claimed(runs);
        return runs;
      });
  }
}
