/** Options of `createResolver` and of each resolution, checked once with messages naming the field. */
import path from 'node:path';
import { ValidationError } from '../core/index.ts';
import type { Clock } from '../time/index.ts';
import { type FallbackConfig, type FallbackConfigInput, parseFallbackConfig } from './reference-schema.ts';
import { compileTables, type SqlExecutor, type TableCatalog, type TableDeclarations } from './sql-query.ts';
import type { GetTaskOutput } from './task-output.ts';
import type { Summarize } from './transform-values.ts';
import type { WorkspaceOptions } from './workspace-path.ts';

export interface ResolverOptions {
  /** Absolute folder that file references may read; without it every file reference is denied. */
  workspaceRoot?: string;
  /**
   * Absolute prefix standing for the workspace root in references, as the protocol writes
   * `/workspace/papers/x.pdf`; null to accept only real paths. @default '/workspace'
   */
  virtualRoot?: string | null;
  /** Largest file a reference may read, in bytes. @default 10485760 (10 MiB) */
  maxFileBytes?: number;
  /** Tables and columns db_query references may read; nothing else is readable. @default {} */
  tables?: TableDeclarations;
  /** Runs db_query statements; required when `tables` declares any. */
  sql?: SqlExecutor;
  /** Upper bound (and default) for a db_query `limit`. @default 1000 */
  maxQueryLimit?: number;
  /** Reads another task's output; statuses other than succeeded/partial are REF_NOT_FOUND. */
  getTaskOutput: GetTaskOutput;
  /** `transform: "summary"`. @default structuralSummary (counts, keys, first items) */
  summarize?: Summarize;
  clock: Clock;
  /** Time limit of one resolution attempt, in ms; past it the attempt is REF_TIMEOUT. @default 30000 */
  timeoutMs?: number;
}

export interface RefPermissions {
  /** Folders (relative to the workspace, or under the virtual root) the task may read; default all. */
  roots?: string[];
  /** Declared tables the task may query; default all. */
  tables?: string[];
  /**
   * Whose data the task may read: `"flow"` — task outputs and scoped table rows (the run history)
   * of its own flow only, i.e. records whose scope equals the resolution's `scope`; `"any"` —
   * every run's, an explicit grant for tasks that must look across flows (an auditor).
   * @default "flow"
   */
  runs?: RunsPermission;
}

export const RunsPermissions = ['flow', 'any'] as const;
export type RunsPermission = (typeof RunsPermissions)[number];

export interface ResolveOptions {
  permissions?: RefPermissions;
  /** The step's `fallback_config`; a reference's own takes precedence. */
  fallback?: FallbackConfigInput;
  /** The caller's cancellation: aborting rejects with its reason (not a resolution failure). */
  signal?: AbortSignal;
  /**
   * The scope the resolution reads within (Baton: the run's root run id). A task output whose
   * record has another scope, and rows of a scoped table outside it, are REF_PERMISSION_DENIED
   * unless `permissions.runs` is `"any"`; without a scope, scoped records are not readable at all.
   */
  scope?: string;
}

export interface CheckedOptions {
  workspace: (WorkspaceOptions & { maxFileBytes: number }) | undefined;
  catalog: TableCatalog;
  sql: SqlExecutor | undefined;
  maxQueryLimit: number;
  getTaskOutput: GetTaskOutput;
  summarize: Summarize | undefined;
  clock: Clock;
  timeoutMs: number;
}

const option = (field: string, expected: string, got: unknown) =>
  new ValidationError(field, expected, got, { code: 'INVALID_OPTION' });

function positiveInt(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw option(field, 'a positive integer', value);
  return value as number;
}

export function checkResolverOptions(o: ResolverOptions): CheckedOptions {
  if (typeof o !== 'object' || o === null) throw option('options', 'an object', o);
  if (typeof o.getTaskOutput !== 'function') throw option('getTaskOutput', 'a function', o.getTaskOutput);
  if (typeof o.clock?.setTimer !== 'function') throw option('clock', 'a Clock', o.clock);
  if (o.summarize !== undefined && typeof o.summarize !== 'function')
    throw option('summarize', 'a function', o.summarize);
  let workspace: CheckedOptions['workspace'];
  if (o.workspaceRoot !== undefined) {
    if (typeof o.workspaceRoot !== 'string' || !path.isAbsolute(o.workspaceRoot))
      throw option('workspaceRoot', 'an absolute path', o.workspaceRoot);
    const v = o.virtualRoot === undefined ? '/workspace' : o.virtualRoot;
    if (v !== null && (typeof v !== 'string' || !path.isAbsolute(v) || path.normalize(v) === path.sep))
      throw option('virtualRoot', 'an absolute path other than / (or null)', v);
    workspace = {
      root: path.resolve(o.workspaceRoot),
      virtualRoot: v === null ? null : path.normalize(v).replace(/[\\/]+$/, ''),
      maxFileBytes: positiveInt(o.maxFileBytes, 'maxFileBytes', 10 * 1024 * 1024),
    };
  }
  const catalog = compileTables(o.tables);
  if (
    catalog.size > 0 &&
    (typeof o.sql?.query !== 'function' || !['sqlite', 'postgres'].includes(o.sql.dialect))
  )
    throw option(
      'sql',
      'a SqlExecutor ({ dialect: "sqlite" | "postgres", query }) when tables are declared',
      o.sql,
    );
  return {
    workspace,
    catalog,
    sql: o.sql,
    maxQueryLimit: positiveInt(o.maxQueryLimit, 'maxQueryLimit', 1000),
    getTaskOutput: o.getTaskOutput,
    summarize: o.summarize,
    clock: o.clock,
    timeoutMs: positiveInt(o.timeoutMs, 'timeoutMs', 30_000),
  };
}

export interface CheckedResolveOptions {
  roots: string[] | undefined;
  tables: string[] | undefined;
  /** Records of this scope only; null: any scope (permissions.runs "any"); undefined: none scoped. */
  scope: string | null | undefined;
  fallback: FallbackConfig | undefined;
  signal: AbortSignal | undefined;
}

const stringArray = (v: unknown, field: string): string[] | undefined => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
    throw option(field, 'an array of strings', v);
  return v;
};

/** `permissions.runs`, checked where a task is defined and again where it is used. */
export function checkRunsPermission(v: unknown, field = 'permissions.runs'): RunsPermission {
  if (v === undefined) return 'flow';
  if (!(RunsPermissions as readonly unknown[]).includes(v)) throw option(field, '"flow" or "any"', v);
  return v as RunsPermission;
}

export function checkResolveOptions(o: ResolveOptions | undefined): CheckedResolveOptions {
  if (o?.scope !== undefined && (typeof o.scope !== 'string' || o.scope === ''))
    throw option('scope', 'a non-empty string', o.scope);
  const runs = checkRunsPermission(o?.permissions?.runs);
  return {
    roots: stringArray(o?.permissions?.roots, 'permissions.roots'),
    tables: stringArray(o?.permissions?.tables, 'permissions.tables'),
    scope: runs === 'any' ? null : o?.scope,
    fallback: o?.fallback === undefined ? undefined : parseFallbackConfig(o.fallback, 'fallback'),
    signal: o?.signal,
  };
}
