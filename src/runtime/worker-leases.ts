/**
 * When the leases this worker holds end, by its own clock. A worker whose heartbeats fail (the
 * database is unreachable) stops the attempts whose lease is about to end, before it ends, not after: once a lease ends another worker may take the run, and an attempt still running
 * here would then run beside it (fencing refuses its writes, but not its side effects — a model
 * call, an email). The check needs no database, so it works exactly when the database does not.
 */
import type { RunRecord } from '../store/index.ts';

export class HeldLeases {
  private readonly until = new Map<string, number>();

  constructor(private readonly leaseMs: number) {}

  /** A run just claimed: its lease ends when the claim set it to. */
  claimed(run: RunRecord, now: number): void {
    this.until.set(run.id, run.leaseExpiresAt ?? now + this.leaseMs);
  }

  /**
   * The store renewed these leases in a heartbeat sent at `sentAt`: each now ends at least a lease
   * after that (the store counts from when it wrote, which is later).
   */
  renewed(ids: Iterable<string>, sentAt: number): void {
    for (const id of ids) if (this.until.has(id)) this.until.set(id, sentAt + this.leaseMs);
  }

  forget(id: string): void {
    this.until.delete(id);
  }

  clear(): void {
    this.until.clear();
  }

  /**
   * Runs whose lease ends within half a lease. Heartbeats go out every third of a lease, so a lease
   * renewed on time has two thirds left at every beat; less than half means a renewal failed, and half a lease leaves the attempt its grace to stop (1 s of the default 5 s).
   */
  expiring(now: number): string[] {
    const out: string[] = [];
    for (const [id, end] of this.until) if (end - now < this.leaseMs / 2) out.push(id);
    return out;
  }
}
