/**
 * Finding the tasks and flows a command needs: a flow module (TypeScript through tsx, or
 * JavaScript), a JSON plan plus the module that defines its tasks (`--tasks`, and the
 * configuration's tasks), or the `source` a run was started from.
 */
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BatonError } from '../core/index.ts';
import {
  type FlowDefinition,
  isFlowDefinition,
  isTaskDefinition,
  readPlanFile,
  type TaskDefinition,
} from '../runtime/index.ts';

export interface Definitions {
  /** Absolute path of the module the definitions came from (stored as the run's source). */
  source: string | null;
  tasks: TaskDefinition[];
  flows: FlowDefinition[];
  /** The export to run when the module's default export is a task or flow. */
  main: TaskDefinition | FlowDefinition | undefined;
}

const CONFIG_NAMES = ['baton.config.ts', 'baton.config.mts', 'baton.config.js', 'baton.config.mjs'];

export async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  try {
    if (/\.(c|m)?tsx?$/.test(path)) {
      const { tsImport } = await import('tsx/esm/api');
      return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    }
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `cannot load ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export function collectDefinitions(exports: Record<string, unknown>, source: string): Definitions {
  const tasks = new Set<TaskDefinition>();
  const flows = new Set<FlowDefinition>();
  const visit = (v: unknown, depth: number) => {
    if (isTaskDefinition(v)) tasks.add(v);
    else if (isFlowDefinition(v)) {
      flows.add(v);
      for (const t of v.tasks) tasks.add(t);
    } else if (depth < 2 && Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (depth < 2 && typeof v === 'object' && v !== null && 'tasks' in v)
      visit((v as { tasks: unknown }).tasks, depth + 1);
  };
  for (const v of Object.values(exports)) visit(v, 0);
  // tsx may nest a CommonJS-style default one level deeper.
  const def = exports.default as unknown;
  const main =
    isTaskDefinition(def) || isFlowDefinition(def) ? def : flows.size === 1 ? [...flows][0] : undefined;
  return { source, tasks: [...tasks], flows: [...flows], main };
}

export async function loadModule(path: string): Promise<Definitions> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new BatonError('INVALID_INPUT', `no such file: ${path}`, { data: { path } });
  return collectDefinitions(await importModule(abs), abs);
}

export function findConfig(cwd = process.cwd()): string | undefined {
  return CONFIG_NAMES.map((n) => resolve(cwd, n)).find((p) => existsSync(p));
}

/** What `baton run <file>` runs: a module's main flow/task, or a JSON plan with its tasks. */
export async function loadRunnable(
  file: string,
  options: { tasks?: string; flow?: string },
): Promise<{ what: TaskDefinition | FlowDefinition; defs: Definitions }> {
  if (extname(file).toLowerCase() === '.json') {
    const plan = readPlanFile(resolve(file));
    // The config's tasks are added by the caller; --tasks names a module on top of them.
    const defs = options.tasks
      ? await loadModule(options.tasks)
      : { source: null, tasks: [], flows: [], main: undefined };
    return { what: plan, defs };
  }
  const defs = await loadModule(file);
  if (options.flow) {
    const named = [...defs.flows, ...defs.tasks].find((d) => d.name === options.flow);
    if (!named)
      throw new BatonError('TASK_NOT_FOUND', `${file} defines no flow or task named "${options.flow}"`, {
        data: { names: [...defs.flows, ...defs.tasks].map((d) => d.name) },
      });
    return { what: named, defs };
  }
  if (!defs.main)
    throw new BatonError(
      'INVALID_INPUT',
      `${file} must export a flow or task as default (or exactly one flow); found ${defs.flows.length} flow(s) and ${defs.tasks.length} task(s). Pick one with --flow <name>`,
    );
  return { what: defs.main, defs };
}
