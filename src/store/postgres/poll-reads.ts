/**
 * The statements a worker's poll sends outside the write queue (its claim, taking due timers, the
 * workers of its host, whether a lease expired, the next wake time, its heartbeat), asked for in the
 * same turn of the event loop, go to the server as one multi-statement message: one round trip
 * instead of one each. An idle process's queries are its cost to a shared server (issue 13).
 *
 * Values are written into the text as literals (batch-conn.ts: typed from context exactly as
 * untyped parameters are). The server runs a multi-statement message as one implicit transaction:
 * if any statement fails, none took effect, and each is sent again alone so that its error (or its
 * result) stays its own. Each statement is atomic by itself and SKIP LOCKED where it writes, so
 * committing them together changes nothing but the round trips.
 *
 * A statement alone in its turn (a claim woken by a hint, most often) goes as a named prepared
 * statement: the server parses and plans it once per connection and then runs its cached plan
 * (planning was 1.6–1.7 ms of a 2.3 ms claim, its execution 0.6–0.7 ms). Not with `prepare` off
 * (`wakeups: 'poll'`, for transaction-mode poolers, where a session's prepared statements are not
 * where the next transaction runs). A prepared `RETURNING *` fails once its table gains a column
 * (a newer Baton migrated it while this process ran): it is then sent unprepared, under new names.
 *
 * A read may carry a time limit (the heartbeat's: a third of a lease). Past it node-postgres fails
 * the query (`query_timeout`, real time) and the pool, handed the error, ends that connection rather
 * than lending it again with the statement still running on it: a socket to a server that vanished
 * without a reset is dropped, not kept busy for good. A message carries its reads' shortest limit;
 * past it (or on a lost connection) its statements fail together, none sent again: the server may
 * have run them.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { renderLiterals } from './batch-conn.ts';
import { isConnectionLoss, objectRows, PG_TYPES, sqlState } from './sql.ts';

/** feature_not_supported: "cached plan must not change result type" (a table changed under it). */
const STALE_PLAN = '0A000';
/** invalid_sql_statement_name: the session no longer has it (DISCARD ALL). */
const NO_SUCH_STATEMENT = '26000';

/** A prepared statement's name: the same text, the same name, in every process and connection. */
function statementName(text: string): string {
  return `baton_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
}

interface Waiting {
  text: string;
  values: unknown[];
  /** Real milliseconds before node-postgres gives up on the answer (and the pool drops the connection). */
  timeoutMs: number | undefined;
  /** Rows as arrays of values (`rowMode: 'array'`), not objects. */
  arrays: boolean;
  resolve: (rows: unknown[]) => void;
  reject: (error: unknown) => void;
}

export class PollReads {
  private waiting: Waiting[] = [];
  /** Round trips sent, and statements they carried (for tests). */
  readonly stats = { messages: 0, statements: 0 };
  /** Send a statement alone as a named prepared statement (off for transaction-mode poolers). */
  prepare = true;
  private readonly names = new Map<string, string>();
  private generation = 0;

  constructor(private readonly pool: pg.Pool) {}

  read<R>(text: string, values: unknown[], timeoutMs?: number, arrays = false): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => void this.flush());
      this.waiting.push({
        text,
        values,
        timeoutMs,
        arrays,
        resolve: resolve as (rows: unknown[]) => void,
        reject,
      });
    });
  }

  /** One statement alone, unprepared. */
  private alone(w: Waiting): Promise<void> {
    return this.pool
      .query(withTimeout({ text: w.text, values: w.values, types: PG_TYPES, ...rowMode(w) }, w.timeoutMs))
      .then((result) => w.resolve(result.rows), w.reject);
  }

  private async flush(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = [];
    this.stats.messages++;
    this.stats.statements += waiting.length;
    if (waiting.length === 1) {
      const [one] = waiting as [Waiting];
      if (!this.prepare) return this.alone(one);
      return this.pool
        .query(
          withTimeout(
            {
              name: this.nameOf(one.text),
              text: one.text,
              values: one.values,
              types: PG_TYPES,
              ...rowMode(one),
            },
            one.timeoutMs,
          ),
        )
        .then(
          (result) => one.resolve(result.rows),
          (error: unknown) => {
            const state = sqlState(error);
            if (state !== STALE_PLAN && state !== NO_SUCH_STATEMENT) return one.reject(error);
            // Its plan went stale under it (another process migrated the table: "cached plan must
            // not change result type"), or the session lost it: nothing ran. New names from now
            // on (each connection keeps the old one), and this once unprepared.
            this.generation++;
            this.names.clear();
            return this.alone(one);
          },
        );
    }
    let results: pg.QueryResult[];
    try {
      const text = waiting.map((w) => renderLiterals(w.text, w.values)).join(';\n');
      const limits = waiting.flatMap((w) => (w.timeoutMs === undefined ? [] : [w.timeoutMs]));
      const limit = limits.length > 0 ? Math.min(...limits) : undefined;
      results = (await this.pool.query(
        // Rows as arrays: one query's row mode holds for all its statements (objects made for the rest).
        withTimeout({ text, types: PG_TYPES, rowMode: 'array' } as pg.QueryConfig, limit),
      )) as unknown as pg.QueryResult[];
    } catch (error) {
      // Unanswered in time: the server may have run them all (a claim among them), so none is sent
      // again; each fails as on a lost connection.
      if (isConnectionLoss(error)) {
        for (const w of waiting) w.reject(error);
        return;
      }
      // The server refused the message: none took effect. Each alone, so a failure is its own.
      for (const w of waiting) void this.alone(w);
      return;
    }
    for (const [i, w] of waiting.entries()) {
      const result = results[i];
      w.resolve(result === undefined ? [] : w.arrays ? result.rows : objectRows(result));
    }
  }

  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      // A claim's text differs by its limit and names' shape only through values: few texts.
      if (this.names.size > 1_000) this.names.clear();
      name = statementName(`${this.generation}\n${text}`);
      this.names.set(text, name);
    }
    return name;
  }
}

function rowMode(w: Waiting): { rowMode?: 'array' } {
  return w.arrays ? { rowMode: 'array' } : {};
}

/** node-postgres reads a per-query `query_timeout` (its types declare it on the client config only). */
function withTimeout(config: pg.QueryConfig, timeoutMs: number | undefined): pg.QueryConfig {
  if (timeoutMs === undefined) return config;
  const limited: pg.QueryConfig & { query_timeout: number } = { ...config, query_timeout: timeoutMs };
  return limited;
}
