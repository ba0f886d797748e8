/** The "all due at once" figure shared by Baton and its peers in bench/peers.ts. */
import { percentile } from './_delivery-runs.ts';

export interface DueAtOnce {
  p50: number;
  p99: number;
}

/**
 * p50/p99 of the lateness samples (ms after the common due instant). `marginMs` is how long before
 * the due instant the last job was enqueued: a job enqueued after it would be measured as late for
 * the wrong reason, so the bench fails instead.
 */
export function dueSamples(late: readonly number[], marginMs: number): DueAtOnce {
  if (marginMs <= 0) throw new LeadTooShort(marginMs);
  const sorted = [...late].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

export class LeadTooShort extends Error {
  constructor(readonly marginMs: number) {
    super(`bench: the last job was enqueued ${-marginMs} ms after the due instant`);
  }
}

/**
 * Runs `fn` with a lead (ms from the first enqueue to the due instant); when enqueueing took longer
 * than the lead (this machine's load varies tenfold), runs it again with a longer one.
 */
export async function withAdaptiveLead<T>(
  firstLeadMs: number,
  fn: (leadMs: number) => Promise<T>,
): Promise<T> {
  let lead = firstLeadMs;
  for (let tries = 1; ; tries++) {
    try {
      return await fn(lead);
    } catch (err) {
      if (!(err instanceof LeadTooShort) || tries === 3) throw err;
      lead = 2 * (lead - err.marginMs);
    }
  }
}
