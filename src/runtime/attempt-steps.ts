/**
 * The memoized steps of one attempt: a step's key is checked and used once per attempt, a recorded
 * result is replayed from the memo, a new one is recorded (fenced by the attempt's lease) and handed
 * back as a replay would see it. A signal read by ctx.waitFor is recorded as a step the same way.
 */
import { assertJsonValue, BatonError, newEvent } from '../core/index.ts';
import type { Fence, Store } from '../store/index.ts';
import type { SignalStep } from './durable-calls.ts';

/** What recording an attempt's steps needs of the attempt. */
export interface StepsOwner {
  store: Store;
  fence: Fence;
  runId: string;
  attempt: number;
  version: number;
  /** Recorded steps by key; absent when there are none (a first attempt), made on the first record. */
  memo: Map<string, unknown> | undefined;
}

export class AttemptSteps {
  /** Step keys used by this attempt; made on the first step. */
  private used: Set<string> | undefined;
  private memo: Map<string, unknown> | undefined;

  constructor(
    private readonly owner: StepsOwner,
    /** Keys answered from the memo, in order (the attempt reports them). */
    private readonly replayed: string[],
    /** Throws LEASE_LOST once the attempt is over. */
    private readonly ensureOpen: (what: string) => void,
  ) {
    this.memo = owner.memo;
  }

  private remember(key: string, value: unknown): void {
    this.memo ??= new Map();
    this.memo.set(key, value);
  }

  /** First half of a step: checks the key and returns the recorded result when there is one. */
  lookup(key: string): { hit: boolean; value?: unknown } {
    if (typeof key !== 'string' || key.length === 0 || key.length > 512)
      throw new BatonError(
        'INVALID_INPUT',
        `ctx.step key must be a string of 1-512 characters, got ${String(key)}`,
      );
    this.used ??= new Set();
    if (this.used.has(key))
      throw new BatonError(
        'INVALID_INPUT',
        `ctx.step key "${key}" is used twice in one attempt; keys must be unique`,
        {
          data: { key },
        },
      );
    this.used.add(key);
    if (this.memo?.has(key)) {
      this.replayed.push(key);
      return { hit: true, value: this.memo.get(key) };
    }
    this.ensureOpen(`ctx.step("${key}")`);
    return { hit: false };
  }

  /** Second half of a step: records the result (fenced) and returns it as a replay would see it. */
  async record(key: string, value: unknown, durationMs: number): Promise<unknown> {
    this.ensureOpen(`ctx.step("${key}") finished`);
    // Refused by name rather than as a raw TypeError, or silently changed (NaN → null) on replay.
    if (value !== undefined) assertJsonValue(value, `ctx.step("${key}") result`, 'NON_RETRIABLE');
    // Hand back exactly what a replay would see (JSON), so first runs and resumes behave alike.
    const stored = value === undefined ? undefined : JSON.parse(JSON.stringify(value));
    await this.owner.store.recordStep(
      this.owner.fence,
      { key, attempt: this.owner.attempt, output: stored, version: this.owner.version },
      [newEvent(this.owner.runId, 'step:completed', { key, durationMs: Math.round(durationMs) })],
    );
    this.remember(key, stored);
    return stored;
  }

  /** Reads the oldest unread signal `name` as the memoized step `key` (fenced), if one is there. */
  async readSignal(name: string, key: string): Promise<SignalStep | undefined> {
    const read = await this.owner.store.readSignal(
      this.owner.fence,
      name,
      { key, attempt: this.owner.attempt, version: this.owner.version },
      [newEvent(this.owner.runId, 'step:completed', { key, durationMs: 0 })],
    );
    if (!read) return undefined;
    const value: SignalStep = { signal: { id: read.id, payload: read.payload, sentAt: read.createdAt } };
    this.remember(key, value);
    return value;
  }
}
