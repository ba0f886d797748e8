import type { z } from 'zod';
import { fieldPath, ValidationError, valueAtPath } from '../core/index.ts';
import { lazySchema } from '../deps/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import { DEFAULT_WEBHOOK_RETRY } from './retry-schedule.ts';
import type { SignatureSecret } from './signature.ts';
import { checkExtraHeaders } from './webhook-headers.ts';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from './webhook-sender.ts';
import { checkWebhookUrl } from './webhook-url.ts';

/**
 * A webhook target as a user configures it, validated once at the edge into the resolved form the
 * engine stores and sends with. Durations are written as ms or strings ("10s", "5m") and become
 * milliseconds here; unknown fields are refused so a typo (`"secert"`) is an error, not an
 * unsigned webhook.
 *
 * @example
 * parseWebhookTarget({ url: 'https://example.com/hooks/baton', secret: process.env.HOOK_SECRET,
 *   timeout: '5s', retry: { base: '2s', maxAttempts: 5 } }, 'webhooks.reports')
 */

const DURATION = 'milliseconds or a string like "10s"';

/** Built with zod on first use (see `deps/zod.ts`). */
export const webhookTargetSchema = lazySchema((z) => {
  const duration = z.union([z.number(), z.string()], { error: DURATION });
  const secretString = z.string({ error: 'a non-empty string' }).min(1, { error: 'a non-empty string' });

  return z.strictObject({
    url: z.string({ error: 'an absolute http: or https: URL' }),
    /** Shared secret for `baton-signature`; several during a rotation. @default none (unsigned) */
    secret: z
      .union([secretString, z.array(secretString).min(1, { error: 'a non-empty array of secrets' })], {
        error: 'a non-empty string or an array of them',
      })
      .optional(),
    /** Time allowed for one try. @default "10s" */
    timeout: duration.optional(),
    retry: z
      .strictObject({
        /** Wait after the first failed try. @default "1s" */
        base: duration.optional(),
        /** Growth of the wait per try. @default 2 */
        factor: z.number({ error: 'a number ≥ 1' }).min(1, { error: 'a number ≥ 1' }).optional(),
        /** Cap of the wait (a receiver's retry-after may exceed it). @default "5m" */
        max: duration.optional(),
        /** Tries in all, the first included. @default 8 */
        maxAttempts: z.int({ error: 'an integer ≥ 1' }).min(1, { error: 'an integer ≥ 1' }).optional(),
      })
      .optional(),
    /** Extra request headers (e.g. authorization); Baton's own headers cannot be overridden. @default {} */
    headers: z.record(z.string(), z.string({ error: 'a string' })).optional(),
    /** Allow a receiver on loopback, link-local or private addresses (checked after resolving too). @default false */
    allowPrivateNetwork: z.boolean({ error: 'true or false' }).optional(),
  });
});

/** A webhook target as written. */
export interface WebhookTargetInput {
  url: string;
  secret?: SignatureSecret;
  timeout?: Duration;
  retry?: { base?: Duration; factor?: number; max?: Duration; maxAttempts?: number };
  headers?: Record<string, string>;
  /** Allow a receiver on loopback, link-local or private addresses. @default false */
  allowPrivateNetwork?: boolean;
}

/** A validated webhook target: defaults filled in, durations in ms; pass `retry` to webhookRetryDelay. */
export interface WebhookTarget {
  url: string;
  secret?: SignatureSecret;
  timeoutMs: number;
  retry: { baseMs: number; factor: number; maxMs: number; maxAttempts: number };
  headers: Readonly<Record<string, string>>;
  allowPrivateNetwork: boolean;
}

type Issue = z.core.$ZodIssue;

function issueError(issue: Issue, raw: unknown, field: string): ValidationError {
  if (issue.code === 'unrecognized_keys')
    return new ValidationError(
      fieldPath(field, [...issue.path, issue.keys[0] ?? '']),
      'absent (not a webhook option)',
      undefined,
      {
        code: 'INVALID_OPTION',
      },
    );
  return new ValidationError(fieldPath(field, issue.path), issue.message, valueAtPath(raw, issue.path), {
    code: 'INVALID_OPTION',
  });
}

function positive(value: Duration, field: string): number {
  const ms = parseDuration(value, field);
  if (ms <= 0) throw new ValidationError(field, 'a positive duration', value, { code: 'INVALID_OPTION' });
  return ms;
}

/**
 * Validates a webhook target. Throws a ValidationError (code INVALID_OPTION) whose field is
 * `field` plus the path of the first problem, e.g. `webhooks.reports.retry.max`.
 */
export function parseWebhookTarget(value: unknown, field = 'webhook'): WebhookTarget {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(field, 'an object with a url', value, { code: 'INVALID_OPTION' });
  const parsed = webhookTargetSchema.safeParse(value);
  if (!parsed.success) throw issueError(parsed.error.issues[0]!, value, field);
  const t = parsed.data;
  checkWebhookUrl(t.url, `${field}.url`, t.allowPrivateNetwork === true);
  const timeoutMs =
    t.timeout === undefined ? DEFAULT_WEBHOOK_TIMEOUT_MS : positive(t.timeout, `${field}.timeout`);
  const r = t.retry ?? {};
  const baseMs =
    r.base === undefined ? DEFAULT_WEBHOOK_RETRY.baseMs : parseDuration(r.base, `${field}.retry.base`);
  const maxMs =
    r.max === undefined
      ? Math.max(DEFAULT_WEBHOOK_RETRY.maxMs, baseMs)
      : parseDuration(r.max, `${field}.retry.max`);
  if (maxMs < baseMs)
    throw new ValidationError(`${field}.retry.max`, `at least retry.base (${baseMs} ms)`, r.max, {
      code: 'INVALID_OPTION',
    });
  const headers = checkExtraHeaders(t.headers ?? {}, `${field}.headers`);
  return {
    url: t.url,
    ...(t.secret === undefined ? {} : { secret: typeof t.secret === 'string' ? t.secret : [...t.secret] }),
    timeoutMs,
    retry: {
      baseMs,
      factor: r.factor ?? DEFAULT_WEBHOOK_RETRY.factor,
      maxMs,
      maxAttempts: r.maxAttempts ?? DEFAULT_WEBHOOK_RETRY.maxAttempts,
    },
    headers,
    allowPrivateNetwork: t.allowPrivateNetwork === true,
  };
}
