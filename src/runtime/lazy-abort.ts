/**
 * An attempt's abort: what the engine needs of an AbortController, with the AbortSignal itself made
 * only when something asks for it (`ctx.signal`, a task thread, a reference fetch). Node's
 * AbortSignal is an EventTarget with two Maps, a hidden class of its own and a record per
 * listener: about 1 KB made and held by every attempt, and a thousand attempts starting together
 * are a thousand of them for the young generation's collector to copy. Most task bodies never read
 * the signal; those that do get a real one, already aborted if the attempt was.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private aborted_ = false;
  private reason_: unknown;
  /** The engine's own listener (the attempt race): one at a time. */
  private listener: (() => void) | undefined;

  get aborted(): boolean {
    return this.aborted_;
  }

  get reason(): unknown {
    return this.reason_;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted_) this.controller.abort(this.reason_);
    }
    return this.controller.signal;
  }

  /**
   * Aborts once: the signal's listeners (the task body's) run first, as they would have on a signal
   * the engine listened to after the body started, then the engine's.
   */
  abort(reason?: unknown): void {
    if (this.aborted_) return;
    this.aborted_ = true;
    this.reason_ = reason ?? new DOMException('This operation was aborted', 'AbortError');
    this.controller?.abort(this.reason_);
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** Calls `fn` once when the attempt aborts (not if it already has: check `aborted` first). */
  onAbort(fn: () => void): void {
    this.listener = fn;
  }

  offAbort(fn: () => void): void {
    if (this.listener === fn) this.listener = undefined;
  }
}
