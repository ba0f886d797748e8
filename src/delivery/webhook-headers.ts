import { ValidationError } from '../core/index.ts';

/**
 * The headers of a webhook request that Baton owns, the check of a target's extra headers, and the
 * reading of a receiver's `retry-after`.
 */

export const WEBHOOK_HEADERS = Object.freeze({
  idempotencyKey: 'idempotency-key',
  deliveryId: 'baton-delivery-id',
  signature: 'baton-signature',
  contentType: 'content-type',
  userAgent: 'user-agent',
});

export const WEBHOOK_USER_AGENT = 'baton';

// A receiver's deduplication and signature check rely on these, and fetch computes the framing
// ones itself; a target's extra headers may not set them. All of baton-* is kept for later use.
const RESERVED = new Set(['idempotency-key', 'content-type', 'content-length', 'host', 'transfer-encoding']);
const RESERVED_PREFIX = 'baton-';

// RFC 9110 token characters for a field name; a value may not hold CR, LF or NUL (header injection).
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;

export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || lower.startsWith(RESERVED_PREFIX);
}

/** Validates a target's extra headers; errors name `${field}.<header>` and use code INVALID_OPTION. */
export function checkExtraHeaders(headers: unknown, field: string): Readonly<Record<string, string>> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new ValidationError(field, 'an object of header names to string values', headers, {
      code: 'INVALID_OPTION',
    });
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const at = `${field}.${name}`;
    if (!HEADER_NAME.test(name))
      throw new ValidationError(at, 'a header name of letters, digits and -', name, {
        code: 'INVALID_OPTION',
      });
    if (isReservedHeader(name))
      throw new ValidationError(
        at,
        'absent: idempotency-key, content-type, content-length, host, transfer-encoding and baton-* are set by Baton',
        undefined,
        { code: 'INVALID_OPTION' },
      );
    const lower = name.toLowerCase();
    if (seen.has(lower))
      throw new ValidationError(at, 'given once (header names ignore case)', undefined, {
        code: 'INVALID_OPTION',
      });
    seen.add(lower);
    if (typeof value !== 'string' || BAD_VALUE.test(value))
      throw new ValidationError(at, 'a string without CR, LF or NUL', value, { code: 'INVALID_OPTION' });
    out[name] = value;
  }
  return Object.freeze(out);
}

/**
 * A `retry-after` value in ms from `nowMs`: delay-seconds (`120`) or an HTTP date. Undefined when
 * absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates (all three RFC 9110 forms) start with the weekday; this keeps "1.5" from being a date.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  // asctime dates carry no zone but mean GMT; Date.parse would read them in the server's zone.
  const at = Date.parse(/\bGMT$/.test(text) ? text : `${text} GMT`);
  if (!Number.isFinite(at)) return undefined;
  return Math.max(0, at - nowMs);
}
