/**
 * What a `baton.config.ts` declares: everything the library's `createBaton` options can set that a
 * command or the server needs (tasks, database, workspace, tables, context budgets, time zone,
 * delivery channels), as one typed object. `defineConfig` only gives it a type.
 */
import type { ContextPlannerOptions } from '../context/index.ts';
import type { WebhookTargetInput } from '../delivery/index.ts';
import type { TableDeclarations } from '../refs/index.ts';
import type { BatonOptions, FlowDefinition, TaskDefinition } from '../runtime/index.ts';
import type { Duration } from '../time/index.ts';

type ScheduleOptions = NonNullable<BatonOptions['schedule']>;

// biome-ignore lint/suspicious/noExplicitAny: a config lists tasks of any input and output types.
export type AnyDefinition = TaskDefinition<any, any> | FlowDefinition<any>;

/** The shape of `baton.config.ts`: the tasks, the store and the options `baton` commands use. */
export interface BatonConfig {
  /**
   * The SQLite file, relative to this file, or a postgres:// URL. `--db`, $BATON_DATABASE_URL and
   * $BATON_DB take precedence. @default "./baton.db" (in the working directory)
   */
  db?: string;
  /**
   * The tasks and flows commands and the server can run: a list, or a module's exports
   * (`import * as tasks from './tasks.ts'`; entries that are not tasks or flows are ignored).
   */
  tasks?: readonly AnyDefinition[] | Readonly<Record<string, unknown>>;
  /** Folder file references may read, relative to this file; `/workspace/x` in a reference means `<workspace>/x`. @default none: every file reference is denied */
  workspace?: string;
  /** Tables and columns `db_query` references may read (Baton's own `execution_logs` is always there). */
  tables?: TableDeclarations;
  /** SQLite file the declared tables live in, relative to this file, opened read-only. @default Baton's own database */
  tablesDatabase?: string;
  /** Finer limits of data references. */
  refs?: {
    /** The prefix standing for the workspace in references; null accepts only real paths. @default "/workspace" */
    virtualRoot?: string | null;
    /** @default 10485760 (10 MiB) */
    maxFileBytes?: number;
    /** @default 1000 */
    maxQueryLimit?: number;
    /** One resolution attempt's time limit, in ms. @default 30000 */
    timeoutMs?: number;
  };
  /** Context budgets per agent, transfer tables, summarizer (as `createBaton({ context })`). */
  context?: ContextPlannerOptions;
  /** IANA zone for delivery times written without one ("tomorrow 9am"), also `parse-time`'s default. @default the system's */
  timezone?: string;
  /** Scheduled delivery: the latest time accepted and the in-progress notice. */
  schedule?: {
    /** @default "365d" */
    horizon?: Duration;
    /** The in-progress notice: prompt template, brand-voice overlays, an optional LLM. */
    progress?: ScheduleOptions['progress'];
  };
  /** Where deliveries (tool results, in-progress notices) go besides the run's event stream. */
  delivery?: {
    /**
     * Named webhooks: HMAC-signed JSON POSTs, retried with backoff. The runs a command creates store
     * each webhook's name and URL; any process (a `baton worker` too) whose config has a webhook of
     * that name and URL sends it.
     */
    webhooks?: Readonly<Record<string, WebhookTargetInput>>;
    /** Called once per delivery. */
    onDelivery?: ScheduleOptions['onDelivery'];
    /** Names this process's onDelivery among processes sharing the database. @default "default" */
    callbackName?: string;
    /** An onDelivery call still running after this counts as failed and is retried. @default "30s" */
    callbackTimeout?: Duration;
  };
  /** How long finished runs are kept. @default "24h" */
  ttl?: Duration;
}

/** Gives a `baton.config.ts` its type: `export default defineConfig({ ... })`. */
export function defineConfig<const C extends BatonConfig>(config: C): C {
  return config;
}
