/**
 * What a browser page must not be able to do to a Baton server it can reach (issue 11 item 4).
 *
 * - DNS rebinding: a page on evil.example whose name is re-pointed at 127.0.0.1 talks to the
 *   loopback server as "same origin". Its requests carry `Host: evil.example`, so the `Host` is
 *   checked against the names the server is bound to (`allowedHosts`).
 * - Cross-site requests: a page may POST a `text/plain` body to any address without a preflight.
 *   A request with an `Origin` is served only from the server's own origin or an allowed one
 *   (`allowedOrigins`), and a request body on a JSON route must be declared JSON (else 415) —
 *   a JSON content type from another origin needs a CORS preflight, which this server never grants.
 *
 * Requests without `Origin` (curl, server-to-server clients) are not browsers' and pass the origin
 * check. The rules apply to every route: the API, the event streams and the dashboard.
 */
import type { MiddlewareHandler } from 'hono';
import { HttpCodes, HttpProblem } from './wire-errors.ts';

export interface GuardOptions {
  /** Host names (no port) the server answers to; `undefined`: any (the mount decides). */
  allowedHosts: readonly string[] | undefined;
  /** Origins (`scheme://host[:port]`) besides the server's own that may send requests. */
  allowedOrigins: readonly string[];
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** "LocalHost:8080" → "localhost"; "[::1]:80" → "::1". */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  // A bare IPv6 address (as in an allow-list) has no port to strip.
  if (h.indexOf(':') !== h.lastIndexOf(':')) return h;
  const colon = h.lastIndexOf(':');
  return (colon === -1 ? h : h.slice(0, colon)).replace(/\.$/, '');
}

function isJson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** A body is there if the request has a stream (a fetch Request) and does not declare it empty. */
function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  if (length !== null && length.trim() === '0') return false;
  return request.body !== null || length !== null || request.headers.has('transfer-encoding');
}

export function requestGuard(options: GuardOptions): MiddlewareHandler {
  const hosts = options.allowedHosts && new Set(options.allowedHosts.map((h) => hostName(h)));
  const origins = new Set(options.allowedOrigins.map((o) => o.toLowerCase()));
  return async (c, next) => {
    const headers = c.req.raw.headers;
    const host = headers.get('host') ?? new URL(c.req.url).host;
    if (hosts && !hosts.has('*') && !hosts.has(hostName(host)))
      throw new HttpProblem(
        403,
        HttpCodes.hostNotAllowed,
        `Host "${host}" is not a name this server is bound to (allowed: ${[...hosts].join(', ')}); add it to allowedHosts (baton serve --allow-host)`,
      );
    const origin = headers.get('origin');
    if (origin !== null) {
      const own = (() => {
        try {
          const o = new URL(origin);
          return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === host.toLowerCase();
        } catch {
          return false;
        }
      })();
      if (!own && !origins.has(origin.toLowerCase()) && !origins.has('*'))
        throw new HttpProblem(
          403,
          HttpCodes.originNotAllowed,
          `requests from origin ${origin} are not allowed; add it to allowedOrigins (baton serve --allow-origin)`,
        );
    }
    await next();
  };
}

/** A body sent to a route that changes something must be declared JSON (415 otherwise). */
export function jsonBodiesOnly(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.raw.headers.get('content-type');
    if (UNSAFE.has(c.req.method) && hasBody(c.req.raw) && !isJson(type ?? undefined))
      throw new HttpProblem(
        415,
        HttpCodes.unsupportedMediaType,
        `request body must be JSON (content-type: application/json), got ${JSON.stringify(type ?? '(none)')}`,
      );
    await next();
  };
}
