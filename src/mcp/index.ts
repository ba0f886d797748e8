/**
 * `baton/mcp`: Baton tasks as MCP tools on the official SDK, over Streamable HTTP (on the same
 * server as Baton's API) and stdio. A call that outlasts the client's patience answers with the
 * partial findings and a run id for `baton_resume`; progress notifications come from checkpoints.
 * Needs the optional peer `@modelcontextprotocol/sdk`; `import 'baton'` never loads this module.
 */
export { BatonMcp, createMcp } from './create-mcp-server.ts';
export type { McpOptions } from './mcp-options.ts';
export { createMcpHttpHandler, type McpHttpHandler, mountMcp, serveMcpStdio } from './mcp-transports.ts';
export type { ToolAnswer } from './run-answers.ts';
