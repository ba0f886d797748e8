/**
 * The worker's heartbeat: every third of a lease it renews the leases of the runs the worker holds
 * (running or claimed ahead), and drops those it no longer holds (cancelled, taken over). When a
 * heartbeat fails, the attempts whose lease ends within half a lease are stopped before it ends
 * (HeldLeases), since another worker may then take their runs over.
 */
import { BatonError, serializeError } from '../core/index.ts';
import type { RunRecord } from '../store/index.ts';
import type { TimerHandle } from '../time/index.ts';
import type { Engine } from './engine.ts';
import { HeldLeases } from './worker-leases.ts';

/** What the heartbeat needs of its worker. */
export interface HeartbeatHost {
  readonly id: string;
  readonly leaseMs: number;
  /** With no lease held, the worker's own row is refreshed this often (a safety poll). */
  readonly safetyPollMs: number;
  /** The runs whose leases to renew: running, then claimed ahead. */
  held(): string[];
  /** Claims are under way (their leases are not in `held` yet). */
  claiming(): boolean;
  stopped(): boolean;
  /** The worker no longer holds this run: abort its attempt, or drop it unstarted. */
  lose(runId: string, reason: BatonError): void;
}

export class WorkerHeartbeat {
  private readonly leases: HeldLeases;
  private timer: TimerHandle | undefined;
  private lastBeat = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly engine: Engine,
    private readonly host: HeartbeatHost,
  ) {
    this.leases = new HeldLeases(host.leaseMs);
  }

  /** Runs just claimed: their leases end when the claim set them to. */
  claimed(runs: readonly RunRecord[]): void {
    const now = this.engine.clock.now();
    for (const run of runs) this.leases.claimed(run, now);
  }

  /** The attempt is over: its lease is no longer this worker's concern. */
  forget(runId: string): void {
    this.leases.forget(runId);
  }

  start(): void {
    this.timer = this.engine.clock.setTimer(Math.floor(this.host.leaseMs / 3), () => {
      void this.beat().finally(() => {
        if (!this.host.stopped()) this.start();
      });
    });
  }

  stop(): void {
    this.engine.clock.clearTimer(this.timer);
    this.leases.clear();
  }

  private async beat(): Promise<void> {
    const { host } = this;
    try {
      const ids = host.held();
      // Holding no lease, there is nothing to extend: its own row is refreshed once a safety poll.
      const now = this.engine.clock.now();
      if (ids.length === 0 && !host.claiming() && now - this.lastBeat < host.safetyPollMs) return;
      this.lastBeat = now;
      const held = new Set(await this.engine.store.heartbeat(host.id, host.leaseMs, ids));
      this.leases.renewed(held, now);
      for (const id of ids)
        if (!held.has(id))
          host.lose(id, new BatonError('LEASE_LOST', `run ${id} is no longer held by ${host.id}`));
    } catch (err) {
      this.engine.logger.warn({ err: serializeError(err).message }, 'heartbeat failed');
      this.stopUnrenewed();
    }
  }

  /**
   * After a failed heartbeat: stops the attempts whose lease ends within half a lease, before
   * another worker may take their runs over.
   */
  private stopUnrenewed(): void {
    const expiring = this.leases.expiring(this.engine.clock.now());
    if (expiring.length === 0) return;
    this.engine.logger.warn(
      { runs: expiring.length },
      'leases could not be renewed; stopping their attempts',
    );
    for (const id of expiring) {
      this.leases.forget(id);
      this.host.lose(
        id,
        new BatonError(
          'LEASE_LOST',
          `the lease of run ${id} could not be renewed before it ends (${this.host.id})`,
        ),
      );
    }
  }
}
