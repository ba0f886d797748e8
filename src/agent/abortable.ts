/**
 * Settles with `promise`, or rejects with the signal's reason as soon as the signal aborts,
 * whichever comes first. A model call or a tool that ignores its AbortSignal must still not keep
 * the loop past its deadline; its late outcome is dropped (and its rejection observed, so Node
 * does not report it as unhandled).
 */
export function raceWithSignal<T>(promise: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  const settled = Promise.resolve(promise);
  if (signal.aborted) {
    settled.catch(() => {});
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      settled.catch(() => {});
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    settled.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}
