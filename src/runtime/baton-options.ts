/**
 * createBaton's options, checked once (a typo is an error naming the key), and what they resolve
 * to for data references: the store's own database as the `execution_logs` table.
 */
import type { Logger } from 'pino';
import type { ContextPlannerOptions } from '../context/index.ts';
import { optionKeys, refuseUnknownKeys } from '../core/index.ts';
import { type SqlExecutor, sqliteExecutor, type TableDeclarations } from '../refs/index.ts';
import { checkOverlays } from '../schedule/index.ts';
import { hasPostgresReads, SqliteStore, type Store } from '../store/index.ts';
import type { Clock, Duration } from '../time/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Delivered } from './delivery-service.ts';
import type { ProgressOptions } from './scheduled-delivery.ts';
import type { RefsOptions } from './step-inputs.ts';
import type { WorkerOptions } from './worker.ts';

/** Options of createBaton: the store, the tasks, the clock, the worker and the delivery settings. */
export interface BatonOptions {
  /**
   * A Store, a `postgres://user:password@host/db` URL (optionally `?schema=name`, default schema
   * `baton`), or a path to a SQLite file. @default $BATON_DATABASE_URL, else "./baton.db"
   */
  store?: Store | string;
  /** @default systemClock */
  clock?: Clock;
  /** A pino logger. @default pino at level $BATON_LOG_LEVEL, else silent */
  logger?: Logger;
  tasks?: TaskDefinition[];
  /** Run an in-process worker (false: this handle only starts and watches runs). @default {} */
  worker?: WorkerOptions | false;
  /** How long finished runs are kept. @default "24h" */
  ttl?: Duration;
  /** How often to look for changes made by other processes while waiting. @default 250 */
  pollMs?: number;
  /**
   * Data references (protocol 002): the workspace root files may be read from, the database tables
   * db_query may read (Baton's own run history is always there as `execution_logs`), limits.
   */
  refs?: RefsOptions;
  /** Context budgets per agent, transfer tables, summarizer (an LLM) for step inputs with references. */
  context?: ContextPlannerOptions;
  /** Scheduled delivery (protocol 004): time zone, horizon, channels and in-progress notices. */
  schedule?: ScheduleOptions;
}

/** Scheduled delivery settings of a Baton (protocol 004). */
export interface ScheduleOptions {
  /** Zone for expressions without one. @default the system's */
  defaultTimezone?: string;
  /** Latest delivery time accepted, from now. @default one year */
  horizon?: Duration;
  /**
   * Called once per delivery (tool_result and in-progress notices), also after a restart. Runs
   * created by this handle store that their deliveries go to this callback (by `callbackName`);
   * only a process with a callback of that name and a worker sends them.
   */
  onDelivery?: (delivery: Delivered) => void | Promise<void>;
  /**
   * Names this process's `onDelivery` among processes sharing the store: a run's callback
   * deliveries go only to a callback with the name stored in the run. @default "default"
   */
  callbackName?: string;
  /** An `onDelivery` call still running after this counts as failed and is retried. @default "30s" */
  callbackTimeout?: Duration;
  /**
   * Webhooks every delivery of the runs this handle creates is posted to, by name: HMAC-signed,
   * retried with backoff. The name and URL are stored with each run; a process sends a delivery
   * only if it configures a webhook of that name with that URL, and leaves it pending otherwise.
   */
  webhooks?: Record<string, unknown>;
  /** The in-progress notice: prompt template, brand-voice overlays, an optional LLM. */
  progress?: ProgressOptions;
}

const BATON_KEYS = optionKeys<BatonOptions>()(
  'store',
  'clock',
  'logger',
  'tasks',
  'worker',
  'ttl',
  'pollMs',
  'refs',
  'context',
  'schedule',
);
const SCHEDULE_KEYS = optionKeys<ScheduleOptions>()(
  'defaultTimezone',
  'horizon',
  'onDelivery',
  'webhooks',
  'progress',
  'callbackName',
  'callbackTimeout',
);
const PROGRESS_KEYS = optionKeys<ProgressOptions>()('template', 'overlays', 'generate');
const WORKER_KEYS = optionKeys<WorkerOptions>()(
  'concurrency',
  'leaseMs',
  'pollMs',
  'sweepEveryMs',
  'safetyPollMs',
);

/** A typo in createBaton's options (`sechdule`, `worker.concurency`) is an error naming the key. */
export function refuseUnknownBatonKeys(options: BatonOptions): void {
  refuseUnknownKeys(options, BATON_KEYS, 'createBaton options');
  if (options.schedule) {
    refuseUnknownKeys(options.schedule, SCHEDULE_KEYS, 'schedule');
    if (options.schedule.progress) {
      refuseUnknownKeys(options.schedule.progress, PROGRESS_KEYS, 'schedule.progress');
      checkOverlays(options.schedule.progress.overlays, 'schedule.progress.overlays');
    }
  }
  if (options.worker) refuseUnknownKeys(options.worker, WORKER_KEYS, 'worker');
}

const EXECUTION_LOGS: TableDeclarations = {
  // A run reads its own flow's history (root_id = its root), never the whole table (issue 11 item 8).
  execution_logs: {
    columns: ['log_id', 'run_id', 'root_id', 'task', 'step_id', 'event', 'at', 'data'],
    scopeColumn: 'root_id',
  },
};

/**
 * db_query reads the store's own database (SQLite file or Postgres database, where the run history
 * is the `execution_logs` view) unless another executor is configured. A store Baton cannot query
 * declares no `execution_logs`, so it needs no executor.
 */
export function refsFor(refs: RefsOptions | undefined, store: Store): RefsOptions {
  const own = ownExecutor(store);
  const sql = refs?.sql ?? own?.sql;
  const logs: TableDeclarations = refs?.sql
    ? EXECUTION_LOGS
    : own?.executionLogs
      ? { execution_logs: own.executionLogs }
      : {};
  return { ...refs, tables: { ...logs, ...refs?.tables }, ...(sql ? { sql } : {}) };
}

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

function ownExecutor(
  store: Store,
): { sql: SqlExecutor; executionLogs: TableDeclarations[string] | undefined } | undefined {
  const logs = EXECUTION_LOGS.execution_logs as TableDeclarations[string];
  if (store instanceof SqliteStore) return { sql: sqliteExecutor(store.database), executionLogs: logs };
  if (hasPostgresReads(store)) {
    const sql: SqlExecutor = {
      dialect: 'postgres',
      query: (text, params) => store.queryReadOnly(text, params),
    };
    // The view lives in the store's schema; a schema name that is not a plain identifier cannot
    // be declared, so references then see only the tables the application declares.
    if (!PLAIN_IDENTIFIER.test(store.schema)) return { sql, executionLogs: undefined };
    return { sql, executionLogs: { ...logs, source: `${store.schema}.execution_logs` } };
  }
  return undefined;
}
