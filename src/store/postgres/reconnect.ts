/**
 * How long writes wait for a lost server: the backoff between tries and when they give up. Used by
 * the write queue for batches lost before COMMIT and for asking after a batch in doubt (in-doubt.ts).
 */

/**
 * A write whose connection keeps breaking before COMMIT fails (STORE_UNAVAILABLE) once it has
 * waited this long through backoffs: a server restart or every session terminated is ridden out, a
 * server that stays down is reported.
 */
export const UNAVAILABLE_AFTER_MS = 6_000;
const RECONNECT_BASE_MS = 200;
/**
 * The longest wait between two tries. The next try after the server is back is at most this late,
 * and writes resume with it (target: within 2 s of the server accepting connections again); a try
 * against a server that is down is one refused connection. It was 3 s (doubling from 200 ms), and
 * writes resumed 1.2–3 s after a restarted server was up.
 */
export const RECONNECT_MAX_MS = 500;

/** The wait before try `n` after a loss (n = 1 for the first retry): 200 ms, 400 ms, then every 500 ms. */
export function reconnectDelay(n: number): number {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.max(0, n - 1));
}
