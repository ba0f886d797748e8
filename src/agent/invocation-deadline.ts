import { BatonError } from '../core/index.ts';
import type { Clock, TimerHandle } from '../time/index.ts';

export type AbortCause = 'deadline' | 'cancelled' | 'failed';

/**
 * The time budget of one invocation on the monotonic clock. Its `signal` aborts at the hard
 * deadline (start + timeoutMs), when the caller cancels, or when `fail` is called (a checkpoint
 * save failed); `abortCause` says which came first. `onPreTimeout` arms one timer at the moment
 * the remaining time falls to `preTimeoutMs`.
 */
export class InvocationDeadline {
  readonly deadline: number;
  private readonly controller = new AbortController();
  private cause: AbortCause | undefined;
  private readonly timers: TimerHandle[] = [];
  private readonly onCallerAbort: () => void;

  constructor(
    private readonly clock: Clock,
    private readonly options: {
      startedAt: number;
      timeoutMs: number;
      preTimeoutMs: number;
      callerSignal?: AbortSignal | undefined;
    },
  ) {
    this.deadline = options.startedAt + options.timeoutMs;
    this.onCallerAbort = () =>
      this.abort(
        'cancelled',
        new BatonError('CANCELLED', 'the agent loop was cancelled', { cause: options.callerSignal?.reason }),
      );
    if (options.callerSignal?.aborted) this.onCallerAbort();
    else options.callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timers.push(
      clock.setTimer(this.remaining(), () =>
        this.abort(
          'deadline',
          new BatonError('TIMEOUT', `the invocation's time budget of ${options.timeoutMs} ms ran out`, {
            data: { timeoutMs: options.timeoutMs },
          }),
        ),
      ),
    );
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get abortCause(): AbortCause | undefined {
    return this.cause;
  }

  remaining(): number {
    return this.deadline - this.clock.monotonic();
  }

  elapsed(): number {
    return this.clock.monotonic() - this.options.startedAt;
  }

  /** Runs `fn` once when the remaining time reaches `preTimeoutMs` (not if already past). */
  onPreTimeout(fn: () => void): void {
    const wait = this.remaining() - this.options.preTimeoutMs;
    if (wait > 0) this.timers.push(this.clock.setTimer(wait, fn));
  }

  fail(err: unknown): void {
    this.abort('failed', err);
  }

  dispose(): void {
    for (const t of this.timers) this.clock.clearTimer(t);
    this.options.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private abort(cause: AbortCause, reason: unknown): void {
    if (this.controller.signal.aborted) return;
    this.cause = cause;
    this.controller.abort(reason);
  }
}
