/**
 * `baton mcp`: Baton's tasks as MCP tools over stdio, for local MCP clients that start it as a
 * subprocess (with a worker, so calls run here). stdout carries only JSON-RPC; notes go to stderr.
 * The MCP SDK (an optional peer) is loaded only by this command and `serve --mcp`.
 */
import { createBaton } from '../runtime/index.ts';
import { loadModule } from './load-definitions.ts';
import { batonOptions, type CommonOptions, openStore } from './run-commands.ts';

export async function mcpCommand(
  options: CommonOptions & { tasks?: string; replyWithin?: string },
): Promise<number> {
  const { serveMcpStdio } = await import('../mcp/index.ts');
  const module = options.tasks ? await loadModule(options.tasks) : { tasks: [], flows: [] };
  const tasks = [...new Set([...options.config.taskDefs, ...module.tasks])];
  const store = await openStore(options.db, false);
  const baton = createBaton(batonOptions(options, store, tasks));
  process.stderr.write(
    `baton MCP server on stdio over ${options.db} (${tasks.length ? tasks.map((t) => t.name).join(', ') : 'no tasks loaded: pass --tasks or write a baton.config.ts'})\n`,
  );
  const stop = new Promise<void>((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve());
  });
  await Promise.race([
    serveMcpStdio(baton, options.replyWithin ? { replyWithin: options.replyWithin } : {}),
    stop,
  ]);
  await baton.close();
  await store.close();
  return 0;
}
