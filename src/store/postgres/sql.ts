/**
 * SQL plumbing shared by the Postgres store: schema-qualified table names, the type parsing every
 * query uses, and the Postgres error codes the store reacts to.
 */
import pg from 'pg';

/** Quotes an identifier for SQL text (schema names come from options, never from run data). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Every statement names its tables with the schema (`"baton".runs`) instead of relying on the
 * connection's search_path: a pool handed in by the application may serve other code too, and a
 * session setting would leak into it (or be changed under us).
 */
export interface Tables {
  readonly schema: string;
  readonly runs: string;
  readonly steps: string;
  readonly checkpoints: string;
  readonly partials: string;
  readonly events: string;
  readonly timers: string;
  readonly workers: string;
  readonly deliveries: string;
  readonly signals: string;
  readonly meta: string;
  readonly migrations: string;
}

export function tablesOf(schema: string): Tables {
  const q = (table: string) => `${quoteIdent(schema)}.${table}`;
  return {
    schema,
    runs: q('runs'),
    steps: q('steps'),
    checkpoints: q('checkpoints'),
    partials: q('partials'),
    events: q('events'),
    timers: q('timers'),
    workers: q('workers'),
    deliveries: q('deliveries'),
    signals: q('signals'),
    meta: q('baton_meta'),
    migrations: q('baton_migrations'),
  };
}

const INT8_OID = 20;

/**
 * BIGINT columns (epoch-ms times, lease tokens, event ids, counts) read as JS numbers: every value
 * Baton stores is far below 2^53. Set per query rather than globally through `pg.types`, which would
 * change how every other user of the `pg` module in this process reads BIGINT.
 */
export const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The rows of a result read with `rowMode: 'array'` as node-postgres makes them otherwise: one object
 * per row, a key per column in column order (a name given twice keeps its last value).
 */
export function objectRows(result: pg.QueryResult): Record<string, unknown>[] {
  const names = result.fields.map((f) => f.name);
  return (result.rows as unknown as unknown[][]).map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
    return row;
  });
}

/** Something that runs a query: a pooled client inside a transaction, or the pool itself. */
export interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

export async function select<R>(db: Queryable, text: string, values: unknown[] = []): Promise<R[]> {
  const result = await db.query({ text, values, types: PG_TYPES });
  return result.rows as R[];
}

/** Runs a statement and returns how many rows it changed. */
export async function execute(db: Queryable, text: string, values: unknown[] = []): Promise<number> {
  const result = await db.query({ text, values, types: PG_TYPES });
  return result.rowCount ?? 0;
}

/** SQLSTATE of a Postgres error, or undefined for anything else. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export const UNIQUE_VIOLATION = '23505';

/** Node socket errors that mean the server could not be reached or the connection broke. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * The connection, not the statement, failed: the server refused or dropped it (`08xxx`), an
 * administrator or a shutdown ended the session (`57P01`–`57P03`: pg_terminate_backend, a restart),
 * the server is out of connections or resources (`53xxx`), or the socket broke. node-postgres
 * reports a socket cut mid-query and a pool wait that timed out without a code, by message only.
 * The same statement on a new connection, a moment later, can succeed.
 */
export function isConnectionLoss(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    if (/^(08|53)[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03')
      return true;
  }
  const message = err instanceof Error ? err.message : '';
  // node-postgres's query_timeout (poll-reads.ts): the pool ends that connection, as if it were lost.
  return /^Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended|^Query read timeout/i.test(
    message,
  );
}
/** Errors after which the same write, run again in a new transaction, can succeed. */
export const RETRYABLE_STATES: ReadonlySet<string> = new Set(['40P01', '40001']);

/**
 * Advisory-lock namespaces (the first key of the two-key form); the second key is the schema's
 * hash, so stores in different schemas of one database never wait on each other.
 */
export const LOCK_MIGRATE = 0x62_74_6e_01;
export const LOCK_EVENTS = 0x62_74_6e_02;
export const LOCK_TASK_LIMIT = 0x62_74_6e_03;
