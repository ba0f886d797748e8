/** Options of Baton's MCP server, checked once with errors naming the field. */
import { ValidationError } from '../core/index.ts';
import type { TaskDefinition } from '../runtime/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

export interface McpOptions {
  /** The tasks offered as tools. @default every task registered with the Baton handle */
  tools?: readonly TaskDefinition[];
  /**
   * How long a tool call waits for its run before it answers with the partial findings and the id
   * to resume (protocol 003's 408, in MCP form). Most MCP clients give up on a call after about
   * 60 s, so the default answers well before that.
   * @default '50s'
   */
  replyWithin?: Duration;
  /**
   * How often a client that runs tools as MCP tasks should poll a task's status (`pollInterval`).
   * @default '1s'
   */
  taskPollInterval?: Duration;
  /** The server's name and version in the MCP handshake. */
  name?: string;
  version?: string;
  /**
   * Host names (no port) the Streamable HTTP endpoint answers to; a request whose `Host` or
   * `Origin` names another gets 403 (DNS-rebinding protection). `baton serve --mcp` on loopback
   * sets localhost, 127.0.0.1 and [::1]. Absent: any host.
   */
  allowedHosts?: readonly string[];
}

export interface ResolvedMcpOptions {
  tools: readonly TaskDefinition[] | undefined;
  replyWithinMs: number;
  taskPollIntervalMs: number;
  name: string;
  version: string;
  allowedHosts: readonly string[] | undefined;
}

export function resolveMcpOptions(options: McpOptions = {}): ResolvedMcpOptions {
  const replyWithinMs = parseDuration(options.replyWithin ?? '50s', 'replyWithin');
  if (replyWithinMs <= 0)
    throw new ValidationError('replyWithin', 'a positive duration such as "50s"', options.replyWithin, {
      code: 'INVALID_OPTION',
    });
  const taskPollIntervalMs = parseDuration(options.taskPollInterval ?? '1s', 'taskPollInterval');
  if (taskPollIntervalMs <= 0)
    throw new ValidationError(
      'taskPollInterval',
      'a positive duration such as "1s"',
      options.taskPollInterval,
      {
        code: 'INVALID_OPTION',
      },
    );
  if (options.tools !== undefined && !Array.isArray(options.tools))
    throw new ValidationError('tools', 'an array of task definitions', options.tools, {
      code: 'INVALID_OPTION',
    });
  return {
    tools: options.tools,
    replyWithinMs,
    taskPollIntervalMs,
    name: options.name ?? 'baton',
    version: options.version ?? '0.1.0',
    allowedHosts: options.allowedHosts?.map((h) => h.toLowerCase()),
  };
}
