/**
 * Authentication and the body limit on Hono's own middleware (issue 15 item 6): `hono/bearer-auth`
 * (timing-safe comparison, RFC 6750 token syntax) and `hono/body-limit` (Content-Length checked
 * first, else the bytes actually sent are counted). Only the answers are ours: every refusal is the
 * API's error shape (401 UNAUTHORIZED with `WWW-Authenticate: Bearer`, 413 BODY_TOO_LARGE naming
 * the limit), as the hand-written checks these replace answered.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { errorResponse, HttpCodes, HttpProblem } from './wire-errors.ts';

const unauthorized = (message: string) => () =>
  errorResponse(new HttpProblem(401, HttpCodes.unauthorized, message));

/** 401 unless the request carries `Authorization: Bearer <token>` (any case of the scheme). */
export function requireToken(token: string): MiddlewareHandler {
  return bearerAuth({
    token,
    noAuthenticationHeader: {
      message: unauthorized('missing Authorization header; send "Authorization: Bearer <token>"'),
    },
    invalidAuthenticationHeader: { message: unauthorized('Authorization header must be "Bearer <token>"') },
    invalidToken: { message: unauthorized('invalid bearer token') },
  });
}

/** 413 for a body over `limit` bytes, by its Content-Length when declared, else as it arrives. */
export function limitBody(limit: number): MiddlewareHandler {
  const limited = bodyLimit({
    maxSize: limit,
    onError: (c: Context) => {
      const declared = c.req.header('transfer-encoding') ? undefined : c.req.header('content-length');
      return errorResponse(
        new HttpProblem(
          413,
          HttpCodes.bodyTooLarge,
          `request body is ${declared ?? `over ${limit}`} bytes; the limit is ${limit} bytes`,
          { limitBytes: limit },
        ),
      );
    },
  });
  return async (c, next) => {
    // A body without a length is counted and re-attached with `new Request(c.req.raw, …)`, which
    // the global Request cannot do with @hono/node-server's lightweight request (serveHttp keeps
    // the global objects untouched): hand it a standard Request over the same, unread stream.
    const raw = c.req.raw;
    if (raw.body && !(raw.headers.has('content-length') && !raw.headers.has('transfer-encoding')))
      c.req.raw = new Request(raw.url, {
        method: raw.method,
        headers: raw.headers,
        body: raw.body,
        signal: raw.signal,
        duplex: 'half',
      } as RequestInit);
    return limited(c, next);
  };
}
