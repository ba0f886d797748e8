/** `baton serve`: the HTTP API (and a worker) over the database, until interrupted. */
import { BatonError } from '../core/index.ts';
import { isLoopback, serveHttp } from '../http/index.ts';
import { createBaton, type FlowDefinition } from '../runtime/index.ts';
import { loadModule } from './load-definitions.ts';
import { batonOptions, type CommonOptions, openStore } from './run-commands.ts';

export async function serveCommand(
  options: CommonOptions & {
    host: string;
    port: string;
    token?: string;
    tasks?: string;
    dashboard?: boolean;
    readOnly?: boolean;
    mcp?: boolean;
    allowHost?: string;
    allowOrigin?: string;
    /** false: no worker here (another process executes the runs). */
    worker?: boolean;
  },
): Promise<number> {
  if (options.mcp && options.readOnly)
    throw new BatonError(
      'INVALID_INPUT',
      '--mcp cannot be combined with --read-only: an MCP tool call starts a run',
    );
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new BatonError('INVALID_INPUT', `--port must be a port number (0-65535), got "${options.port}"`);
  const module = options.tasks ? await loadModule(options.tasks) : { tasks: [], flows: [] };
  const defs = {
    tasks: [...new Set([...options.config.taskDefs, ...module.tasks])],
    flows: [...new Set([...options.config.flowDefs, ...module.flows])],
  };
  const store = await openStore(options.db, false);
  const baton = createBaton({
    ...batonOptions(options, store, defs.tasks),
    ...(options.worker === false ? { worker: false } : {}),
  });
  const server = await serveHttp(baton, {
    host: options.host,
    port,
    ...((options.token ?? process.env.BATON_TOKEN)
      ? { token: options.token ?? process.env.BATON_TOKEN }
      : {}),
    flows: defs.flows as FlowDefinition[],
    dashboard: options.dashboard === true,
    readOnly: options.readOnly === true,
    ...(options.allowHost !== undefined ? { allowedHosts: list(options.allowHost) } : {}),
    ...(options.allowOrigin !== undefined ? { allowedOrigins: list(options.allowOrigin) } : {}),
  });
  // MCP on the same server and port, behind the same token (the SDK loads only with --mcp).
  const mcp = options.mcp
    ? (await import('../mcp/index.ts')).mountMcp(
        server.handler,
        baton,
        isLoopback(options.host) ? { allowedHosts: ['localhost', '127.0.0.1', '[::1]'] } : {},
      )
    : undefined;
  const names = [...defs.tasks.map((t) => t.name), ...defs.flows.map((f) => f.name)];
  process.stderr.write(
    `baton serving ${server.url}${mcp ? ` (MCP at ${server.url}/mcp)` : ''} on ${store.location} (${names.length ? names.join(', ') : 'no tasks loaded: pass --tasks or write a baton.config.ts'})\n`,
  );
  if (options.dashboard) {
    // The token travels in the fragment, which browsers never send to a server or a proxy log.
    const token = options.token ?? process.env.BATON_TOKEN;
    process.stderr.write(
      `dashboard: ${server.url}/dashboard/${token ? '#token=<your token>' : ''}${options.readOnly ? ' (read-only)' : ''}\n`,
    );
  }
  await new Promise<void>((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve());
  });
  await mcp?.close();
  await server.close();
  await baton.close();
  await store.close();
  return 0;
}

/** "a, b,c" → ["a", "b", "c"]; the HTTP options check each entry and name the bad one. */
function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
