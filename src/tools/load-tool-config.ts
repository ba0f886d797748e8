import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BatonError, ValidationError } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';
import type { JsonSchemaObject } from './args-validator.ts';
import {
  defineTool,
  isToolName,
  type ToolArgs,
  type ToolDefinition,
  type ToolTaskOptions,
} from './define-tool.ts';
import { importHandler, realPathInside } from './import-handler.ts';
import { readJsonFile } from './read-json-file.ts';

/**
 * Tools from the protocol's plugin folders: `<tool>/config.json` (`{ "name", "description"?,
 * "inputSchema" }`, JSON only) beside a handler `<tool>/index.{ts,js,mjs}`. Every error names the
 * file; paths that leave the folder (`..`, symlinks) are refused.
 */

/** The protocol's `config.json` shape. Other keys are ignored (plugin systems add their own). */
export interface ToolConfig {
  name: string;
  description?: string;
  inputSchema: JsonSchemaObject;
  /** The plugin's own timeout (the protocol's `timeoutMs`); the code's `timeout` wins. */
  timeoutMs?: number;
}

export type ToolHandler<O = unknown> = (args: ToolArgs, ctx: TaskContext) => Promise<O> | O;

/** A handler function, or the module to take it from (relative to the config's folder, staying inside it). */
export type HandlerSource<O = unknown> = ToolHandler<O> | { module: string; export?: string };

type OptionsFor = ToolTaskOptions | ((name: string) => ToolTaskOptions | undefined);

export interface LoadToolsDirOptions {
  /** Task options (timeout, retry, …) for every tool, or per tool name. @default {} */
  taskOptions?: OptionsFor;
}

const HANDLER_FILES = ['index.ts', 'index.js', 'index.mjs'] as const;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function configError(file: string, key: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(`${file}: ${key}`, expected, value, { data: { file } });
}

/** Reads and checks a `config.json`; `path` is the file or the folder holding it. */
export function readToolConfig(path: string): { file: string; config: ToolConfig } {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'config.json') : path;
  const raw = readJsonFile(file);
  if (!isRecord(raw))
    throw configError(file, 'the config', 'a JSON object { "name", "description"?, "inputSchema" }', raw);
  const { name, description, inputSchema, timeoutMs } = raw;
  if (typeof name !== 'string' || !isToolName(name))
    throw configError(file, 'name', '1-128 letters, digits or _.:- starting with a letter or digit', name);
  if (description !== undefined && typeof description !== 'string')
    throw configError(file, 'description', 'a string', description);
  if (!isRecord(inputSchema)) throw configError(file, 'inputSchema', 'a JSON Schema object', inputSchema);
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))
  )
    throw configError(file, 'timeoutMs', 'a positive number of milliseconds', timeoutMs);
  const config: ToolConfig = {
    name,
    inputSchema,
    ...(description !== undefined ? { description } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
  return { file, config };
}

async function resolveHandler<O>(source: HandlerSource<O>, file: string): Promise<ToolHandler<O>> {
  if (typeof source === 'function') return source;
  if (!isRecord(source) || typeof source.module !== 'string')
    throw new ValidationError('handler', 'a function or { module, export? }', source, {
      code: 'INVALID_OPTION',
    });
  if (source.export !== undefined && typeof source.export !== 'string')
    throw new ValidationError('handler.export', 'a string (the export name)', source.export, {
      code: 'INVALID_OPTION',
    });
  const dir = dirname(file);
  const path = realPathInside(dir, resolve(dir, source.module), 'handler module');
  return (await importHandler(path, source.export)) as ToolHandler<O>;
}

/** Defines the tool; an error from defineTool (a bad schema, say) gets the file's name in front. */
function defineFrom<O>(
  file: string,
  config: ToolConfig,
  handler: ToolHandler<O>,
  options: ToolTaskOptions<O> | undefined,
): ToolDefinition<ToolArgs, O> {
  try {
    return defineTool<ToolArgs, O>({
      ...options,
      name: config.name,
      ...(config.description !== undefined ? { description: config.description } : {}),
      inputSchema: config.inputSchema,
      handler,
      ...(options?.timeout === undefined && config.timeoutMs !== undefined
        ? { timeout: config.timeoutMs }
        : {}),
    });
  } catch (err) {
    if (!(err instanceof BatonError)) throw err;
    throw new BatonError(err.code, `${file}: ${err.message}`, { cause: err, data: { ...err.data, file } });
  }
}

/**
 * A tool from a protocol-shaped `config.json` (or the folder holding it) and its handler.
 * @example await loadToolConfig('plugins/image_draw', { module: './index.ts' }, { timeout: '60s' })
 */
export async function loadToolConfig<O = unknown>(
  path: string,
  handler: HandlerSource<O>,
  options?: ToolTaskOptions<O>,
): Promise<ToolDefinition<ToolArgs, O>> {
  const { file, config } = readToolConfig(path);
  return defineFrom(file, config, await resolveHandler(handler, file), options);
}

function optionsFor(options: OptionsFor | undefined, name: string): ToolTaskOptions | undefined {
  return typeof options === 'function' ? options(name) : options;
}

/**
 * Every `<tool>/config.json` under `dir` with its handler from `<tool>/index.{ts,js,mjs}` (the
 * default export or `handler`). Folders without a config.json, hidden ones and node_modules are
 * skipped; a tool folder or file that leaves `dir` through a symlink is refused; two tools with one
 * name are refused. Sorted by folder name.
 */
export async function loadToolsDir(
  dir: string,
  options: LoadToolsDirOptions = {},
): Promise<ToolDefinition[]> {
  let root: string;
  try {
    root = realpathSync(dir);
    if (!statSync(root).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot read the tools folder ${dir}: ${(err as Error).message}`, {
      cause: err,
      data: { path: dir },
    });
  }
  const tools: ToolDefinition[] = [];
  const seen = new Map<string, string>();
  const entries = readdirSync(root, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const folder = join(root, entry.name);
    if (!(entry.isDirectory() || entry.isSymbolicLink()) || !statSync(folder).isDirectory()) continue;
    if (!existsSync(join(folder, 'config.json'))) continue;
    const real = realPathInside(root, folder, 'tool folder');
    const file = realPathInside(real, join(real, 'config.json'), 'tool config');
    const { config } = readToolConfig(file);
    const handlerFile = HANDLER_FILES.map((f) => join(real, f)).find((p) => existsSync(p));
    if (handlerFile === undefined)
      throw new BatonError(
        'INVALID_INPUT',
        `${folder} has no handler: expected ${HANDLER_FILES.join(', ')}`,
        {
          data: { path: folder },
        },
      );
    const handler = await importHandler(realPathInside(real, handlerFile, 'tool handler'));
    const other = seen.get(config.name);
    if (other !== undefined)
      throw new BatonError('INVALID_INPUT', `${file}: tool "${config.name}" is also defined in ${other}`, {
        data: { file, name: config.name, other },
      });
    seen.set(config.name, file);
    tools.push(defineFrom(file, config, handler, optionsFor(options.taskOptions, config.name)));
  }
  return tools;
}
