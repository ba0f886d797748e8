/**
 * Tools (protocol 004): a tool is a task whose arguments are described by a JSON Schema (in code or
 * in a plugin's `config.json`), so it gets timeouts, retries and durability like any task. Only a
 * tool whose schema declares `schedule` accepts one; `prepareToolArgs` checks a call and reads its
 * schedule before anything is stored, and `schedule` never reaches a handler or a tool server.
 */
export type { JsonSchemaObject } from './args-validator.ts';
export {
  type DefineToolOptions,
  defineTool,
  isTool,
  isToolName,
  type ToolArgs,
  type ToolDefinition,
  type ToolInfo,
  type ToolInput,
  type ToolTaskOptions,
} from './define-tool.ts';
export { type HttpToolContext, type HttpToolOptions, httpToolHandler } from './http-tool.ts';
export {
  type HandlerSource,
  type LoadToolsDirOptions,
  loadToolConfig,
  loadToolsDir,
  readToolConfig,
  type ToolConfig,
  type ToolHandler,
} from './load-tool-config.ts';
export { type PreparedToolArgs, type PrepareToolArgsOptions, prepareToolArgs } from './prepare-tool-args.ts';
