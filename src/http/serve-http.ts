/**
 * The HTTP API on a Node server (`baton serve`). Loopback by default; bound to any other address
 * it refuses to start without a bearer token, so a run store is never exposed by accident.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { BatonError, refuseUnknownKeys } from '../core/index.ts';
import type { Baton } from '../runtime/index.ts';
import { createHttpHandler, type HttpHandler } from './create-http-handler.ts';
import { HTTP_OPTION_KEYS, type HttpOptions } from './http-options.ts';

export interface ServeHttpOptions extends HttpOptions {
  /** Address to bind; anything but loopback needs `token`. @default "127.0.0.1" */
  host?: string;
  /** Port to listen on; 0 picks a free one (see `url`). @default 0 */
  port?: number;
}

export interface HttpServer extends AsyncDisposable {
  /** e.g. "http://127.0.0.1:43127" */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly handler: HttpHandler;
  /** Stops accepting requests and closes open connections (SSE streams included). */
  close(): Promise<void>;
}

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h)
  );
}

/** The handler's options plus where to listen. */
const SERVE_KEYS: readonly string[] = [...HTTP_OPTION_KEYS, 'host', 'port'];

export async function serveHttp(baton: Baton, options: ServeHttpOptions = {}): Promise<HttpServer> {
  refuseUnknownKeys(options, SERVE_KEYS, 'serveHttp options');
  const { host = '127.0.0.1', port = 0, ...httpOptions } = options;
  if (typeof host !== 'string' || host === '')
    throw new BatonError(
      'INVALID_OPTION',
      `host must be an address like "127.0.0.1", got ${JSON.stringify(host)}`,
      {
        data: { field: 'host' },
      },
    );
  if (!(Number.isSafeInteger(port) && port >= 0 && port <= 65_535))
    throw new BatonError(
      'INVALID_OPTION',
      `port must be an integer from 0 to 65535, got ${JSON.stringify(port)}`,
      {
        data: { field: 'port' },
      },
    );
  if (!isLoopback(host) && httpOptions.token === undefined)
    throw new BatonError(
      'INVALID_OPTION',
      `token is required when serving on ${host}, which is not a loopback address: anyone who can reach it could start, read and cancel runs`,
      { data: { field: 'token', host } },
    );
  // A tokenless loopback server is what DNS rebinding targets: answer only to its own names.
  // allowedHosts adds to a loopback server's own names; elsewhere (a token is required) it is the list.
  const given = httpOptions.allowedHosts;
  const own = ['localhost', '127.0.0.1', '::1', host.replace(/^\[|\]$/g, '')];
  // Not an array: left as it is, for the option check to refuse it by name.
  const allowedHosts = !isLoopback(host)
    ? given
    : given === undefined
      ? own
      : Array.isArray(given)
        ? [...given, ...own]
        : given;
  const handler = createHttpHandler(baton, {
    ...httpOptions,
    ...(allowedHosts ? { allowedHosts } : {}),
  });
  await baton.ready();
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve(
      // Keep the process's global Request/Response untouched (no global singletons).
      { fetch: handler, hostname: host, port, overrideGlobalObjects: false },
      () => resolve(s as Server),
    ) as Server;
    s.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      handler.close();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  return {
    url: `http://${shownHost}:${address.port}`,
    host: address.address,
    port: address.port,
    handler,
    close,
    [Symbol.asyncDispose]: close,
  };
}
