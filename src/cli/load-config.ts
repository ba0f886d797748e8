/**
 * The configuration every command reads: `--config <file>`, else a baton.config.{ts,mts,js,mjs}
 * in the working directory. Its default export (`defineConfig({ ... })`) is checked with unknown
 * keys refused; a file without a default export is a plain tasks module, as before configs existed.
 * Everything a config names that can fail (tables database, context options) is opened or checked
 * here, at start-up, so a command fails with exit 2 before it touches the store.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseConfig, type ResolvedConfig } from '../config/index.ts';
import { createContextPlanner } from '../context/index.ts';
import { BatonError, isBatonError } from '../core/index.ts';
import { sqliteExecutor } from '../refs/index.ts';
import {
  type FlowDefinition,
  isFlowDefinition,
  isTaskDefinition,
  type TaskDefinition,
} from '../runtime/index.ts';
import { type SqliteDatabase, sqliteDriver } from '../store/index.ts';
import { collectDefinitions, findConfig, importModule } from './load-definitions.ts';

export interface CliConfig extends ResolvedConfig {
  /** Tasks the config declares or exports, and those of its flows. */
  taskDefs: TaskDefinition[];
  flowDefs: FlowDefinition[];
  /** Closes what the config opened (the tables database). */
  close(): void;
}

const EMPTY: CliConfig = {
  file: undefined,
  db: undefined,
  tablesDatabase: undefined,
  tasks: [],
  options: {},
  taskDefs: [],
  flowDefs: [],
  close: () => undefined,
};

/** tsx loads a .ts file outside a `"type": "module"` package as CommonJS: its default is one level down. */
function unwrapDefault(def: unknown): unknown {
  if (typeof def === 'object' && def !== null && (def as { __esModule?: unknown }).__esModule === true)
    return (def as { default?: unknown }).default;
  return def;
}

export async function loadCliConfig(explicit: string | undefined, cwd = process.cwd()): Promise<CliConfig> {
  const file = explicit === undefined ? findConfig(cwd) : resolve(cwd, explicit);
  if (file === undefined) return EMPTY;
  if (!existsSync(file))
    throw new BatonError('INVALID_INPUT', `--config: no such file: ${explicit}`, {
      data: { field: 'config' },
    });
  const exports = await importModule(file);
  const def = unwrapDefault(exports.default);
  const isConfig = def !== undefined && !isTaskDefinition(def) && !isFlowDefinition(def);
  const config = isConfig ? parseConfig(def, file) : { ...EMPTY, file };
  const { default: _default, ...named } = exports;
  const defs = collectDefinitions(isConfig ? { ...named, __config: config.tasks } : exports, file);
  let opened: SqliteDatabase | undefined;
  if (config.tablesDatabase !== undefined) {
    try {
      const { Database } = sqliteDriver();
      opened = new Database(config.tablesDatabase, { readonly: true, fileMustExist: true });
    } catch (err) {
      throw new BatonError(
        'INVALID_OPTION',
        `${file}: tablesDatabase cannot be opened read-only (${config.tablesDatabase}): ${(err as Error).message}`,
        { data: { field: 'tablesDatabase', file } },
      );
    }
    config.options.refs = { ...config.options.refs, sql: sqliteExecutor(opened) };
  }
  if (config.options.context !== undefined) {
    try {
      await createContextPlanner(config.options.context);
    } catch (err) {
      opened?.close();
      if (isBatonError(err))
        throw new BatonError('INVALID_OPTION', `${file}: context.${err.message}`, {
          data: { ...err.data, file },
        });
      throw err;
    }
  }
  return {
    ...config,
    taskDefs: defs.tasks,
    flowDefs: defs.flows,
    close: () => opened?.close(),
  };
}
