/** Options of the HTTP handler, validated once at the edge with errors that name the field. */
import { optionKeys, refuseUnknownKeys, ValidationError } from '../core/index.ts';
import type { FlowDefinition } from '../runtime/index.ts';
import type { Clock } from '../time/index.ts';
import type { BatonMetrics } from './run-metrics.ts';

export interface HttpOptions {
  /**
   * Bearer token every route but /health requires: 16 or more characters of RFC 6750's token syntax
   * (`A-Z a-z 0-9 - . _ ~ + /`, then `=` padding). @default none: no authentication
   */
  token?: string;
  /** Largest request body, in bytes; larger bodies get 413. @default 1_048_576 (1 MB) */
  bodyLimitBytes?: number;
  /**
   * The longest a sync request waits, whatever the task's timeout or the request's `timeoutMs`
   * (the platform's limit minus a margin, in a serverless function). @default 300_000
   */
  maxSyncWaitMs?: number;
  /**
   * How long past the task's own invocation timeout a sync request waits for the engine to park or
   * finish the run, when the request gives no `timeoutMs`. @default 1_000
   */
  syncGraceMs?: number;
  /** Interval of the SSE heartbeat comments. @default 15_000 */
  heartbeatMs?: number;
  /** Flows a request may start by name (`{ flow: "name" }`); JSON plans need no registration. */
  flows?: readonly FlowDefinition[];
  /** Routes live under this path (e.g. "/api"). @default "" */
  basePath?: string;
  /** Recorded as `by` in resume and decision events. @default "http" */
  actor?: string;
  /**
   * The run option that caps one invocation of a run started or resumed here (so a checkpoint is
   * saved before a platform limit); set by the serverless adapter. @default none
   */
  invocationTimeoutMs?: number;
  /**
   * Metrics to record into: share one with `measureStore` for exact checkpoint timings. Each handler
   * records its store's events into it, so give one metrics object to one handler per store.
   * @default new metrics of this handler
   */
  metrics?: BatonMetrics;
  /** @default baton.clock */
  clock?: Clock;
  /** Serve the web dashboard at `<basePath>/dashboard` (its data comes from this API). @default false */
  dashboard?: boolean;
  /** Refuse every change (start, resume, decide, cancel, bulk) with 403; the dashboard hides its actions. @default false */
  readOnly?: boolean;
  /**
   * Host names (without port) requests may be addressed to; any other `Host` gets 403, which stops
   * DNS rebinding. `["*"]` allows any. @default any for a fetch handler; `serveHttp` on a loopback
   * address always allows localhost, 127.0.0.1, ::1 and the bound address, and adds these
   */
  allowedHosts?: readonly string[];
  /**
   * Origins (`https://app.example.com`) besides the server's own whose pages may send requests;
   * a request with any other `Origin` gets 403. Requests without `Origin` (curl, servers) pass.
   * `["*"]` allows any. @default [] (same origin only)
   */
  allowedOrigins?: readonly string[];
}

/** Every HttpOptions key: a typo (`tokn`, `bodyLimit`) is refused by name, never silently ignored. */
export const HTTP_OPTION_KEYS = optionKeys<HttpOptions>()(
  'token',
  'bodyLimitBytes',
  'maxSyncWaitMs',
  'syncGraceMs',
  'heartbeatMs',
  'flows',
  'basePath',
  'actor',
  'invocationTimeoutMs',
  'metrics',
  'clock',
  'dashboard',
  'readOnly',
  'allowedHosts',
  'allowedOrigins',
);

export interface ResolvedHttpOptions {
  token: string | undefined;
  bodyLimitBytes: number;
  maxSyncWaitMs: number;
  syncGraceMs: number;
  heartbeatMs: number;
  flows: ReadonlyMap<string, FlowDefinition>;
  basePath: string;
  actor: string;
  invocationTimeoutMs: number | undefined;
  dashboard: boolean;
  readOnly: boolean;
  allowedHosts: readonly string[] | undefined;
  allowedOrigins: readonly string[];
}

function bad(field: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
}

function positiveInt(field: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && (value as number) > 0)) throw bad(field, 'a positive integer', value);
  return value as number;
}

function isHost(v: string): boolean {
  return (
    v === '*' ||
    /^(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:]*:[0-9a-fA-F:.]+|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$/.test(v)
  );
}

function isOrigin(v: string): boolean {
  if (v === '*') return true;
  if (!URL.canParse(v)) return false;
  const u = new URL(v);
  return (
    (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === v.toLowerCase().replace(/\/$/, '')
  );
}

function stringList(field: string, value: unknown, ok: (v: string) => boolean): string[] {
  const expected =
    field === 'allowedHosts'
      ? 'an array of host names without port ("localhost", "baton.internal") or ["*"]'
      : 'an array of origins like "https://app.example.com" (scheme, host, optional port; no path) or ["*"]';
  if (!Array.isArray(value)) throw bad(field, expected, value);
  for (const [i, v] of value.entries())
    if (typeof v !== 'string' || !ok(v)) throw bad(`${field}[${i}]`, expected, v);
  return [...(value as string[])];
}

export function resolveHttpOptions(options: HttpOptions = {}): ResolvedHttpOptions {
  if (typeof options !== 'object' || options === null) throw bad('options', 'an object', options);
  refuseUnknownKeys(options, HTTP_OPTION_KEYS, 'HTTP options');
  const token = options.token;
  // RFC 6750's b64token syntax, which hono/bearer-auth accepts in the header: a token outside it
  // could never authenticate, so it is refused here, where the mistake is made.
  if (token !== undefined && (typeof token !== 'string' || !/^(?=.{16,}$)[A-Za-z0-9._~+/-]+=*$/.test(token)))
    throw bad(
      'token',
      'at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then = padding), the bearer token syntax of RFC 6750',
      token === undefined ? token : '(hidden)',
    );
  const basePath = options.basePath ?? '';
  if (typeof basePath !== 'string' || !(basePath === '' || /^\/[A-Za-z0-9._~\-/]*[^/]$/.test(basePath)))
    throw bad('basePath', 'a path like "/api" (no trailing slash) or ""', basePath);
  const flows = new Map<string, FlowDefinition>();
  for (const [i, f] of (options.flows ?? []).entries()) {
    if (f?.type !== 'flow') throw bad(`flows[${i}]`, 'a flow from defineFlow', f);
    flows.set(f.name, f);
  }
  if (options.actor !== undefined && (typeof options.actor !== 'string' || options.actor === ''))
    throw bad('actor', 'a non-empty string', options.actor);
  const syncGraceMs = options.syncGraceMs ?? 1_000;
  if (!(Number.isSafeInteger(syncGraceMs) && syncGraceMs >= 0))
    throw bad('syncGraceMs', 'an integer ≥ 0', syncGraceMs);
  for (const field of ['dashboard', 'readOnly'] as const)
    if (options[field] !== undefined && typeof options[field] !== 'boolean')
      throw bad(field, 'true or false', options[field]);
  const allowedHosts =
    options.allowedHosts === undefined ? undefined : stringList('allowedHosts', options.allowedHosts, isHost);
  const allowedOrigins = stringList('allowedOrigins', options.allowedOrigins ?? [], isOrigin);
  return {
    token,
    allowedHosts,
    allowedOrigins,
    dashboard: options.dashboard ?? false,
    readOnly: options.readOnly ?? false,
    bodyLimitBytes: positiveInt('bodyLimitBytes', options.bodyLimitBytes, 1_048_576),
    maxSyncWaitMs: positiveInt('maxSyncWaitMs', options.maxSyncWaitMs, 300_000),
    syncGraceMs,
    heartbeatMs: positiveInt('heartbeatMs', options.heartbeatMs, 15_000),
    flows,
    basePath,
    actor: options.actor ?? 'http',
    invocationTimeoutMs:
      options.invocationTimeoutMs === undefined
        ? undefined
        : positiveInt('invocationTimeoutMs', options.invocationTimeoutMs, 0),
  };
}
