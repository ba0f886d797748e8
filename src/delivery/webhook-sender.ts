import { ValidationError } from '../core/index.ts';
import { type Clock, systemClock } from '../time/index.ts';
import { privateAddressOf, type ResolveHost } from './private-address.ts';
import { type SignatureSecret, signBody } from './signature.ts';
import {
  checkExtraHeaders,
  parseRetryAfter,
  WEBHOOK_HEADERS,
  WEBHOOK_USER_AGENT,
} from './webhook-headers.ts';
import { checkWebhookUrl } from './webhook-url.ts';

/**
 * One try of a webhook delivery: a signed JSON POST, classified into delivered, retry later, or
 * give up. It never throws; every problem, including bad input, comes back as an outcome so the
 * engine can record it on the delivery row. The retry loop is the engine's (see retry-schedule.ts);
 * each try must reuse the delivery's idempotency key so the receiver can drop duplicates.
 *
 * Redirects are not followed: a 3xx is a configuration problem, and following it would send the
 * signed body to a host nobody configured.
 */

export interface SendWebhookInput {
  /** http: or https: URL. https is not required, so a receiver on localhost works; use it elsewhere. */
  url: string;
  /** Signs the body into `baton-signature` when set (several secrets during a rotation). @default none (unsigned) */
  secret?: SignatureSecret;
  /** The payload; sent as JSON. */
  body: unknown;
  /** Same on every try of one delivery; the receiver's key for dropping duplicates. */
  idempotencyKey: string;
  /** The delivery's id, sent as `baton-delivery-id` for the receiver's logs. */
  deliveryId: string;
  /** Time allowed for the whole exchange, response included. @default 10_000 */
  timeoutMs?: number;
  /** Now, epoch ms, from the engine's Clock: the signature's timestamp and the base of a retry-after date. */
  nowMs: number;
  /** Aborts the request (worker shutdown, cancelled run); the outcome is then retryable. */
  signal?: AbortSignal;
  /** Extra headers from the target's configuration (never Baton's own). @default none */
  headers?: Readonly<Record<string, string>>;
  /**
   * Send to loopback, link-local or private addresses, by literal or by what the name resolves to.
   * @default false (refused, not retried)
   */
  allowPrivateNetwork?: boolean;
  /** Resolves the URL's host for that check. @default dns.lookup, all addresses */
  resolveHost?: ResolveHost;
  /** @default globalThis.fetch */
  fetchImpl?: typeof fetch;
  /** Arms the timeout. @default systemClock */
  clock?: Clock;
}

/** Why a try failed: bad input, no answer, or an answer that is not 2xx. */
export const WebhookFailureReasons = [
  'invalid_request',
  'network',
  'timeout',
  'aborted',
  'redirect',
  'http_status',
  'private_address',
] as const;
export type WebhookFailureReason = (typeof WebhookFailureReasons)[number];

export type WebhookOutcome =
  | { ok: true; status: number; durationMs: number }
  | {
      ok: false;
      /** The receiver's HTTP status when it answered. */
      status?: number;
      /** Whether a later try may succeed (network errors, timeouts, 408, 429, 5xx). */
      retryable: boolean;
      reason: WebhookFailureReason;
      error: string;
      /** The receiver's `retry-after`, in ms; pass it to webhookRetryDelay. */
      retryAfterMs?: number;
      durationMs: number;
    };

/** @default 10_000 */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

// Enough of an error response to say what went wrong, not enough to bloat the deliveries table.
const SNIPPET_BYTES = 512;
const SNIPPET_CHARS = 200;
const HEADER_VALUE = /^[^\r\n\0]+$/;

interface Prepared {
  url: URL;
  payload: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

function invalid(field: string, expected: string, received: unknown): ValidationError {
  return new ValidationError(field, expected, received);
}

function prepare(input: SendWebhookInput): Prepared {
  const { url, idempotencyKey, deliveryId, nowMs } = input;
  const timeoutMs = input.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const parsed = checkWebhookUrl(url, 'url', input.allowPrivateNetwork === true);
  if (typeof idempotencyKey !== 'string' || !HEADER_VALUE.test(idempotencyKey))
    throw invalid('idempotencyKey', 'a non-empty string without CR, LF or NUL', idempotencyKey);
  if (typeof deliveryId !== 'string' || !HEADER_VALUE.test(deliveryId))
    throw invalid('deliveryId', 'a non-empty string without CR, LF or NUL', deliveryId);
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw invalid('timeoutMs', 'a positive number of milliseconds', timeoutMs);
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs) || nowMs < 0)
    throw invalid('nowMs', 'an epoch time in milliseconds', nowMs);
  let payload: string | undefined;
  try {
    payload = JSON.stringify(input.body);
  } catch (cause) {
    throw new ValidationError('body', 'a JSON-serializable value', input.body, { cause });
  }
  if (payload === undefined) throw invalid('body', 'a JSON-serializable value', input.body);
  const headers: Record<string, string> = {
    ...(input.headers === undefined ? {} : checkExtraHeaders(input.headers, 'headers')),
    [WEBHOOK_HEADERS.contentType]: 'application/json',
    [WEBHOOK_HEADERS.idempotencyKey]: idempotencyKey,
    [WEBHOOK_HEADERS.deliveryId]: deliveryId,
  };
  if (!Object.keys(headers).some((h) => h.toLowerCase() === WEBHOOK_HEADERS.userAgent))
    headers[WEBHOOK_HEADERS.userAgent] = WEBHOOK_USER_AGENT;
  if (input.secret !== undefined) headers[WEBHOOK_HEADERS.signature] = signBody(input.secret, payload, nowMs);
  return { url: parsed, payload, headers, timeoutMs };
}

/** Up to SNIPPET_BYTES of the body, on one line; '' when it cannot be read. */
async function readSnippet(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short (or the timeout firing) still leaves the status to report.
  } finally {
    reader.cancel().catch(() => {});
  }
  const text = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8');
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SNIPPET_CHARS ? `${line.slice(0, SNIPPET_CHARS - 3)}...` : line;
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function causeText(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code)
      ? `${code} ${cause.message}`
      : cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * POSTs `body` as JSON to `url`, signed when a secret is set, and says whether it was delivered.
 * @example
 * const outcome = await sendWebhook({ url, secret, body: payload, idempotencyKey: row.idempotencyKey,
 *   deliveryId: row.id, nowMs: clock.now(), clock });
 * if (!outcome.ok && outcome.retryable)
 *   wait = webhookRetryDelay(row.attempts, { retryAfterMs: outcome.retryAfterMs });
 */
export async function sendWebhook(input: SendWebhookInput): Promise<WebhookOutcome> {
  const clock = input.clock ?? systemClock;
  const started = clock.monotonic();
  const elapsed = () => Math.round(clock.monotonic() - started);
  let prepared: Prepared;
  try {
    prepared = prepare(input);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return { ok: false, retryable: false, reason: 'invalid_request', error, durationMs: elapsed() };
  }
  const { signal } = input;
  if (signal?.aborted)
    return { ok: false, retryable: true, reason: 'aborted', error: 'aborted before sending', durationMs: 0 };
  if (!input.allowPrivateNetwork) {
    // The name may resolve somewhere the literal check could not see (a public name for 127.0.0.1).
    // A resolver that answers differently a moment later is not covered: pin receivers by IP, or
    // keep them off private networks.
    const address = await privateAddressOf(prepared.url.hostname, input.resolveHost);
    if (address !== undefined)
      return {
        ok: false,
        retryable: false,
        reason: 'private_address',
        error: `${prepared.url.hostname} resolves to ${address}, a loopback, link-local or private address (allowPrivateNetwork: true allows it)`,
        durationMs: elapsed(),
      };
  }

  const controller = new AbortController();
  let timedOut = false;
  const timer = clock.setTimer(prepared.timeoutMs, () => {
    timedOut = true;
    controller.abort(new Error(`no response within ${prepared.timeoutMs} ms`));
  });
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const fetchImpl = input.fetchImpl ?? globalThis.fetch;
  try {
    const response = await fetchImpl(prepared.url, {
      method: 'POST',
      headers: prepared.headers,
      body: prepared.payload,
      redirect: 'manual',
      signal: controller.signal,
    });
    const { status } = response;
    if (status >= 200 && status < 300) {
      response.body?.cancel().catch(() => {});
      return { ok: true, status, durationMs: elapsed() };
    }
    const snippet = await readSnippet(response);
    const said = snippet ? `: ${snippet}` : '';
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location') ?? 'no location';
      const error = `HTTP ${status} redirect to ${location} (redirects are not followed; configure the final URL)`;
      return { ok: false, status, retryable: false, reason: 'redirect', error, durationMs: elapsed() };
    }
    const retryable = isRetryableStatus(status);
    const retryAfterMs = retryable
      ? parseRetryAfter(response.headers.get('retry-after'), input.nowMs)
      : undefined;
    return {
      ok: false,
      status,
      retryable,
      reason: 'http_status',
      error: `HTTP ${status}${said}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      durationMs: elapsed(),
    };
  } catch (err) {
    if (timedOut)
      return {
        ok: false,
        retryable: true,
        reason: 'timeout',
        error: `no response within ${prepared.timeoutMs} ms`,
        durationMs: elapsed(),
      };
    if (signal?.aborted)
      return {
        ok: false,
        retryable: true,
        reason: 'aborted',
        error: 'aborted while sending',
        durationMs: elapsed(),
      };
    return { ok: false, retryable: true, reason: 'network', error: causeText(err), durationMs: elapsed() };
  } finally {
    clock.clearTimer(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
