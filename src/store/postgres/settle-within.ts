import { BatonError } from '../../core/index.ts';

/**
 * `work`, or a STORE_UNAVAILABLE error once `ms` of real time pass without an answer. A statement
 * can wait without failing — on a row lock, on a pool whose connections all hang, on a socket to a
 * server that vanished without a reset — and a caller that must act before a deadline (a worker
 * whose leases end) needs the failure instead. This is the adapter's network timeout, so it is real
 * time, like the pool's connect timeout, not the injected clock: a test's clock jumping ahead of the
 * database's I/O must not fail a statement that would answer in a millisecond. The statement itself
 * is not cancelled: its connection goes back to the pool whenever it settles.
 */
export function settleWithin<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new BatonError('STORE_UNAVAILABLE', `${what} got no answer from Postgres within ${ms} ms`)),
      ms,
    );
    timer.unref?.();
  });
  // A late failure has no one left to hear it.
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
