/**
 * Checking a configuration object once, at start-up: unknown keys are refused by name (a typo such
 * as `timzone` must not silently mean "the system's zone"), every value is checked against what it
 * should be, relative paths are resolved against the config file's folder, and the result is the
 * `createBaton` options the commands and the server use.
 */
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { BatonError, fieldPath, valueAtPath } from '../core/index.ts';
import { parseWebhookTarget } from '../delivery/index.ts';
import { lazySchema } from '../deps/index.ts';
import type { TableDeclarations } from '../refs/index.ts';
import { type BatonOptions, isFlowDefinition, isTaskDefinition } from '../runtime/index.ts';
import { checkZone } from '../schedule/index.ts';
import { parseDuration } from '../time/index.ts';
import type { AnyDefinition, BatonConfig } from './define-config.ts';

const CONTEXT_KEYS = [
  'contextLimits',
  'agentLimits',
  'tables',
  'defaultEncoding',
  'encodingFor',
  'encodings',
  'customEncodings',
  'tokenCache',
  'summarizer',
  'summary',
  'batch',
  'previewCount',
  'trim',
  'summaryConcurrency',
  'onOverflow',
] as const;

/** Built with zod on first use (see `deps/zod.ts`). */
const configSchema = lazySchema((z) => {
  const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: 'a function' });
  const duration = z.union([z.number(), z.string()], { error: 'milliseconds or a string like "24h"' });
  const path = z
    .string({ error: 'a path (relative to the config file)' })
    .min(1, { error: 'a non-empty path' });
  const anything = z.unknown().optional();

  // The context options' values are checked by createContextPlanner; their names are checked here.
  const contextSchema = z.strictObject(Object.fromEntries(CONTEXT_KEYS.map((k) => [k, anything])), {
    error: 'an object of context options',
  });

  return z.strictObject(
    {
      db: path.optional(),
      tasks: z
        .union([z.array(z.unknown()), z.record(z.string(), z.unknown())], {
          error: 'a list of tasks and flows, or a module of them',
        })
        .optional(),
      workspace: path.optional(),
      tables: z
        .record(
          z.string(),
          z.strictObject(
            {
              columns: z.array(z.string({ error: 'a column name' }), { error: 'a list of column names' }),
              source: z.string({ error: 'a table or view name' }).optional(),
            },
            { error: 'an object { columns, source? }' },
          ),
          { error: 'an object of table declarations' },
        )
        .optional(),
      tablesDatabase: path.optional(),
      refs: z
        .strictObject(
          {
            virtualRoot: z.union([z.string(), z.null()], { error: 'an absolute path or null' }).optional(),
            maxFileBytes: z.int({ error: 'a whole number of bytes' }).positive().optional(),
            maxQueryLimit: z.int({ error: 'a whole number' }).positive().optional(),
            timeoutMs: z.int({ error: 'a whole number of milliseconds' }).positive().optional(),
          },
          { error: 'an object' },
        )
        .optional(),
      context: contextSchema.optional(),
      timezone: z.string({ error: 'an IANA time zone name such as "Asia/Shanghai"' }).optional(),
      schedule: z
        .strictObject(
          {
            horizon: duration.optional(),
            progress: z
              .strictObject(
                { template: anything, overlays: anything, generate: fn.optional() },
                { error: 'an object' },
              )
              .optional(),
          },
          { error: 'an object' },
        )
        .optional(),
      delivery: z
        .strictObject(
          {
            webhooks: z.record(z.string(), z.unknown(), { error: 'an object of named webhooks' }).optional(),
            onDelivery: fn.optional(),
            callbackName: z.string({ error: 'a name' }).optional(),
            callbackTimeout: duration.optional(),
          },
          { error: 'an object' },
        )
        .optional(),
      ttl: duration.optional(),
    },
    { error: 'an object (export default defineConfig({ ... }))' },
  );
});

/** The configuration as the commands use it. */
export interface ResolvedConfig {
  /** The file it came from (absolute), if any. */
  file: string | undefined;
  /** Absolute SQLite path or a postgres:// URL, if the config names one. */
  db: string | undefined;
  /** Absolute path of the database the declared tables live in, if not Baton's own. */
  tablesDatabase: string | undefined;
  tasks: AnyDefinition[];
  /** Options for createBaton (the store, clock, logger and worker are the command's). */
  options: Pick<BatonOptions, 'refs' | 'context' | 'schedule' | 'ttl'>;
}

function configError(
  file: string | undefined,
  field: string,
  message: string,
  data: object = {},
): BatonError {
  return new BatonError('INVALID_OPTION', `${file ?? 'config'}: ${field} ${message}`, {
    data: { ...data, field, ...(file ? { file } : {}) },
  });
}

function firstIssue(raw: unknown, file: string | undefined, issue: z.core.$ZodIssue): BatonError {
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const field = fieldPath('', [...issue.path, key]).replace(/^\./, '');
    return configError(file, field, 'is not a known option', { key });
  }
  const field = fieldPath('', issue.path).replace(/^\./, '') || 'the default export';
  const got = valueAtPath(raw, issue.path);
  return configError(
    file,
    field,
    `must be ${issue.message}${got === undefined ? '' : `, got ${JSON.stringify(got) ?? typeof got}`}`,
  );
}

/** Re-throws an option error with the config file and field in front. */
function within<T>(file: string | undefined, field: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof BatonError)
      throw configError(file, field, `is invalid: ${err.message}`, err.data ?? {});
    throw err;
  }
}

function definitionsOf(tasks: BatonConfig['tasks'], file: string | undefined): AnyDefinition[] {
  if (tasks === undefined) return [];
  if (Array.isArray(tasks)) {
    return tasks.map((t, i) => {
      if (!isTaskDefinition(t) && !isFlowDefinition(t))
        throw configError(file, `tasks[${i}]`, 'must be a task (defineTask) or a flow (defineFlow)');
      return t as AnyDefinition;
    });
  }
  return Object.values(tasks).filter((t) => isTaskDefinition(t) || isFlowDefinition(t)) as AnyDefinition[];
}

/**
 * Validates a configuration (a `baton.config.ts`'s default export). Throws INVALID_OPTION naming
 * the file and the field; relative paths are taken from the file's folder (else `cwd`).
 */
export function parseConfig(raw: unknown, file?: string, cwd = process.cwd()): ResolvedConfig {
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw firstIssue(raw, file, parsed.error.issues[0] as z.core.$ZodIssue);
  const c = raw as BatonConfig;
  const base = file ? dirname(file) : cwd;
  const at = (p: string | undefined) => (p === undefined ? undefined : resolve(base, p));
  const timezone =
    c.timezone === undefined ? undefined : within(file, 'timezone', () => checkZone(c.timezone, 'timezone'));
  if (c.ttl !== undefined) within(file, 'ttl', () => parseDuration(c.ttl as never, 'ttl'));
  if (c.schedule?.horizon !== undefined)
    within(file, 'schedule.horizon', () => parseDuration(c.schedule?.horizon as never, 'horizon'));
  if (c.delivery?.callbackTimeout !== undefined)
    within(file, 'delivery.callbackTimeout', () =>
      parseDuration(c.delivery?.callbackTimeout as never, 'callbackTimeout'),
    );
  for (const [name, target] of Object.entries(c.delivery?.webhooks ?? {}))
    within(file, `delivery.webhooks.${name}`, () => parseWebhookTarget(target, name));
  const refs: NonNullable<BatonOptions['refs']> = {
    ...(c.workspace !== undefined ? { workspaceRoot: at(c.workspace) as string } : {}),
    ...(c.tables !== undefined ? { tables: c.tables as TableDeclarations } : {}),
    ...c.refs,
  };
  const schedule: NonNullable<BatonOptions['schedule']> = {
    ...(timezone !== undefined ? { defaultTimezone: timezone } : {}),
    ...(c.schedule?.horizon !== undefined ? { horizon: c.schedule.horizon } : {}),
    ...(c.schedule?.progress !== undefined ? { progress: c.schedule.progress } : {}),
    ...(c.delivery?.webhooks !== undefined ? { webhooks: { ...c.delivery.webhooks } } : {}),
    ...(c.delivery?.onDelivery !== undefined ? { onDelivery: c.delivery.onDelivery } : {}),
    ...(c.delivery?.callbackName !== undefined ? { callbackName: c.delivery.callbackName } : {}),
    ...(c.delivery?.callbackTimeout !== undefined ? { callbackTimeout: c.delivery.callbackTimeout } : {}),
  };
  return {
    file,
    db: c.db !== undefined && /^postgres(ql)?:\/\//i.test(c.db) ? c.db : at(c.db),
    tablesDatabase: at(c.tablesDatabase),
    tasks: definitionsOf(c.tasks, file),
    options: {
      refs,
      schedule,
      ...(c.context !== undefined ? { context: c.context } : {}),
      ...(c.ttl !== undefined ? { ttl: c.ttl } : {}),
    },
  };
}
