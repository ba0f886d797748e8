/**
 * The transports: Streamable HTTP as a fetch handler that mounts at `/mcp` on Baton's own HTTP API,
 * and stdio for local clients that start Baton as a subprocess.
 */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { HttpHandler } from '../http/index.ts';
import type { Baton } from '../runtime/index.ts';
import { BatonMcp } from './create-mcp-server.ts';
import type { McpOptions } from './mcp-options.ts';

export type McpHttpHandler = ((request: Request) => Promise<Response>) & {
  /** Closes every open MCP session. */
  close(): Promise<void>;
};

interface Session {
  server: ReturnType<BatonMcp['createServer']>;
  transport: WebStandardStreamableHTTPServerTransport;
}

/** Open sessions kept per process; the oldest is closed beyond this (a client re-initializes). */
const MAX_SESSIONS = 1_000;

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function hostnameOf(value: string): string | undefined {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function hostAllowed(request: Request, allowed: readonly string[]): boolean {
  const host = hostnameOf(request.headers.get('host') ?? new URL(request.url).host);
  if (!host || !allowed.includes(host)) return false;
  const origin = request.headers.get('origin');
  if (origin === null) return true;
  const o = hostnameOf(origin);
  return o !== undefined && allowed.includes(o);
}

/**
 * MCP over Streamable HTTP as a standard fetch handler, with sessions (`Mcp-Session-Id`): a client's
 * cancellation reaches the call it cancels, and GET opens the session's notification stream. Runs
 * live in Baton's store, so a session lost with its process costs a client only a re-initialize.
 */
export function createMcpHttpHandler(baton: Baton, options: McpOptions = {}): McpHttpHandler {
  const mcp = new BatonMcp(baton, options);
  const sessions = new Map<string, Session>();
  const allowed = mcp.options.allowedHosts;
  const handler = async (request: Request): Promise<Response> => {
    if (allowed && !hostAllowed(request, allowed))
      return jsonRpcError(403, -32000, 'Host or Origin not allowed (DNS-rebinding protection)');
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const session = sessions.get(id);
      if (!session)
        return jsonRpcError(
          404,
          -32001,
          `no MCP session ${id} (it ended or this server restarted): initialize again`,
        );
      return session.transport.handleRequest(request);
    }
    if (request.method !== 'POST')
      return jsonRpcError(400, -32000, 'a request without Mcp-Session-Id must be a POST of initialize');
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return jsonRpcError(400, -32700, 'the body is not JSON');
    }
    if (!isInitializeRequest(body))
      return jsonRpcError(400, -32000, 'no Mcp-Session-Id header: the first request must be initialize');
    const server = mcp.createServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, { server, transport });
        if (sessions.size > MAX_SESSIONS) {
          const [oldest] = sessions.keys();
          if (oldest !== undefined) void sessions.get(oldest)?.server.close();
        }
      },
      onsessionclosed: (sid) => {
        sessions.delete(sid);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  };
  return Object.assign(handler, {
    close: async () => {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.server.close()));
    },
  });
}

/**
 * Serves MCP at `path` (default `/mcp`) on Baton's HTTP API, behind the same bearer token: one
 * server, one port, for the REST API and for MCP clients. Call before the first request.
 */
export function mountMcp(
  http: HttpHandler,
  baton: Baton,
  options: McpOptions & { path?: string } = {},
): McpHttpHandler {
  const handler = createMcpHttpHandler(baton, options);
  http.app.all(options.path ?? '/mcp', (c) => handler(c.req.raw));
  return handler;
}

/** MCP over stdio (a local client runs `baton mcp`); resolves when the client disconnects. */
export async function serveMcpStdio(
  baton: Baton,
  options: McpOptions & { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<void> {
  const server = new BatonMcp(baton, options).createServer();
  const transport = new StdioServerTransport(
    options.stdin as NodeJS.ReadStream | undefined,
    options.stdout as NodeJS.WriteStream | undefined,
  );
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  (options.stdin ?? process.stdin).once('end', () => void server.close());
  await closed;
}
