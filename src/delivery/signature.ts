import { createHmac, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../core/index.ts';

/**
 * The `baton-signature` header of a webhook (Stripe's scheme): `t=<unix seconds>,v1=<hex>` where the
 * hex is HMAC-SHA256 of `"<t>.<body>"` under the shared secret. Signing the timestamp with the body
 * lets a receiver refuse a replayed request once it is older than its tolerance. During a secret
 * rotation the sender signs with both secrets (several `v1=` entries) and a receiver that knows
 * either one accepts the request, so the two sides need not switch at the same instant.
 */

/** The header a webhook's signature travels in. */
export const SIGNATURE_HEADER = 'baton-signature';

/** How far a signature's timestamp may be from the receiver's clock. @default 300_000 (5 minutes) */
export const DEFAULT_SIGNATURE_TOLERANCE_MS = 300_000;

/** Why a signature was refused; `ok: false` results carry one. */
export const SignatureFailures = [
  /** No header at all (or an empty one). */
  'missing_header',
  /** Not `t=<digits>` plus at least one well-formed `v1=<64 hex digits>`. */
  'malformed_header',
  /** Older than the tolerance: possibly a replay. */
  'stale_timestamp',
  /** Further in the future than the tolerance: the sender's clock is off, or the header was forged. */
  'future_timestamp',
  /** No v1 entry matches any of the secrets: wrong secret or a changed body. */
  'signature_mismatch',
] as const;
export type SignatureFailure = (typeof SignatureFailures)[number];

/** The result of verifySignature: ok, or the reason the signature was refused. */
export type SignatureCheck = { ok: true } | { ok: false; reason: SignatureFailure };

/** A secret, or several during a rotation (each produces or accepts one `v1=` entry). */
export type SignatureSecret = string | readonly string[];

/** The raw request body as it was sent: a string, or the bytes a receiver read. */
export type SignedBody = string | Uint8Array;

// A header longer than this is refused before any HMAC work: ten rotated signatures fit easily.
const MAX_HEADER_LENGTH = 4_096;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const UNIX_SECONDS = /^\d{1,12}$/;

function secretList(secret: unknown, field: string): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0)
    throw new ValidationError(field, 'a non-empty string or a non-empty array of them', secret, {
      code: 'INVALID_OPTION',
    });
  list.forEach((s: unknown, i) => {
    if (typeof s !== 'string' || s.length === 0)
      throw new ValidationError(Array.isArray(secret) ? `${field}[${i}]` : field, 'a non-empty string', s, {
        code: 'INVALID_OPTION',
      });
  });
  return list as readonly string[];
}

function checkBody(body: unknown): SignedBody {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  throw new ValidationError('body', 'the raw body as a string or bytes', body);
}

function hmac(secret: string, seconds: number, body: SignedBody): Buffer {
  return createHmac('sha256', secret).update(`${seconds}.`).update(body).digest();
}

/**
 * The `baton-signature` value for `body` sent at `timestampMs` (epoch ms, floored to seconds).
 * @example signBody('whsec_1', '{"a":1}', 1_767_225_600_000) // 't=1767225600,v1=5d1c…'
 */
export function signBody(secret: SignatureSecret, body: SignedBody, timestampMs: number): string {
  const secrets = secretList(secret, 'secret');
  checkBody(body);
  if (typeof timestampMs !== 'number' || !Number.isFinite(timestampMs) || timestampMs < 0)
    throw new ValidationError('timestampMs', 'a non-negative epoch time in milliseconds', timestampMs);
  const seconds = Math.floor(timestampMs / 1000);
  const entries = secrets.map((s) => `v1=${hmac(s, seconds, body).toString('hex')}`);
  return [`t=${seconds}`, ...entries].join(',');
}

export interface VerifySignatureInput {
  /** The shared secret, or every secret currently accepted during a rotation. */
  secret: SignatureSecret;
  /** The `baton-signature` header as received (Node gives `undefined` when it is absent). */
  header: string | null | undefined;
  /** The raw body exactly as received, before any JSON parsing. */
  body: SignedBody;
  /** The receiver's current time, epoch ms. */
  nowMs: number;
  /** Largest accepted distance between the signed timestamp and `nowMs`. @default 300_000 */
  toleranceMs?: number;
}

interface ParsedHeader {
  seconds: number;
  signatures: Buffer[];
}

// Entries other than t= and v1= (a future v2, say) are skipped so old receivers keep working.
function parseHeader(header: string): ParsedHeader | undefined {
  if (header.length > MAX_HEADER_LENGTH) return undefined;
  let seconds: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 1) return undefined;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (seconds !== undefined || !UNIX_SECONDS.test(value)) return undefined;
      seconds = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) return undefined;
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (seconds === undefined || signatures.length === 0) return undefined;
  return { seconds, signatures };
}

/**
 * Checks a webhook's `baton-signature` header against the raw body. Never throws for a bad request
 * (the answer says why it was refused); throws a ValidationError only for a bad `secret`,
 * `nowMs` or `toleranceMs`, which are the receiver's own mistakes.
 */
export function verifySignature(input: VerifySignatureInput): SignatureCheck {
  const { header, body, nowMs, toleranceMs = DEFAULT_SIGNATURE_TOLERANCE_MS } = input;
  const secrets = secretList(input.secret, 'secret');
  checkBody(body);
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs))
    throw new ValidationError('nowMs', 'an epoch time in milliseconds', nowMs);
  if (typeof toleranceMs !== 'number' || !Number.isFinite(toleranceMs) || toleranceMs < 0)
    throw new ValidationError('toleranceMs', 'a non-negative number of milliseconds', toleranceMs, {
      code: 'INVALID_OPTION',
    });
  if (typeof header !== 'string' || header.trim() === '') return { ok: false, reason: 'missing_header' };
  const parsed = parseHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed_header' };
  const signedMs = parsed.seconds * 1000;
  if (nowMs - signedMs > toleranceMs) return { ok: false, reason: 'stale_timestamp' };
  if (signedMs - nowMs > toleranceMs) return { ok: false, reason: 'future_timestamp' };
  // Every pair is compared, so the time taken does not tell which entry or secret came close.
  let matched = false;
  for (const secret of secrets) {
    const expected = hmac(secret, parsed.seconds, body);
    for (const candidate of parsed.signatures) if (timingSafeEqual(expected, candidate)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'signature_mismatch' };
}
