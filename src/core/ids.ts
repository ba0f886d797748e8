// Crockford base32: sortable, case-insensitive, no ambiguous letters.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

// Random bytes are drawn from the system 1,280 at a time: one getRandomValues call per id cost
// more than the rest of creating a run's id (a call into the engine for 10 bytes).
const POOL = 1_280;
let pool = new Uint8Array(0);
let pooled = POOL;

/** Ten fresh random bytes, at `pool[pooled…pooled+9]`. */
function randomBytes10(): Uint8Array {
  pooled += 10;
  if (pooled + 10 > pool.length) {
    // Web Crypto, not node:crypto: the typed client imports core and runs in browsers and on edge runtimes.
    pool = globalThis.crypto.getRandomValues(new Uint8Array(POOL));
    pooled = 0;
  }
  return pool;
}

/**
 * A ULID-style id (48-bit time + 80 random bits) with a prefix, e.g. `run_01JD3…`. Ids sort by
 * creation time, so `ls` lists newest first without an extra index; the time comes from the caller's
 * clock so tests are deterministic in order.
 */
export function newId(prefix: string, nowMs: number): string {
  let time = Math.max(0, Math.floor(nowMs));
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const bytes = randomBytes10();
  let tail = '';
  let acc = 0;
  let bits = 0;
  for (let i = pooled; i < pooled + 10; i++) {
    acc = (acc << 8) | (bytes[i] as number);
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      tail += ALPHABET[(acc >> bits) & 31];
    }
  }
  return `${prefix}_${head}${tail}`;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** User-chosen ids (run ids, step ids) are short and safe to print, log and put in URLs. */
export function isSafeId(value: string): boolean {
  return ID_PATTERN.test(value);
}
