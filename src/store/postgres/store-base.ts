/**
 * What every Postgres store operation stands on: the pool (its own or the application's), the
 * schema migrated before any operation runs, the wake-ups, and close, which waits for what is in
 * flight. postgres-store.ts adds the Store's operations on top.
 */
import pg from 'pg';
import { BatonError } from '../../core/index.ts';
import { systemClock } from '../../time/index.ts';
import type { GraphCheckpointStore } from '../langgraph-records.ts';
import { DEFAULT_TTL_MS } from '../run-rules.ts';
import type { EventListener, StoreHealth, WakeChannel } from '../store.ts';
import { storeHealth } from './health.ts';
import { PgGraphCheckpoints } from './langgraph-tables.ts';
import { migrate, openError } from './migrate.ts';
import { PgContext, storeUnavailable } from './pg-context.ts';
import * as reads from './run-reads.ts';
import { isConnectionLoss, tablesOf } from './sql.ts';
import { DEFAULT_SCHEMA, type PostgresStoreOptions } from './store-options.ts';
import { describePool, parsePostgresUrl, redactError } from './url.ts';
import { PgWakeups } from './wakeups.ts';

export class PgStoreBase {
  readonly location: string;
  readonly schema: string;
  protected readonly ctx: PgContext;
  private readonly ownsPool: boolean;
  /** Settles when the schema is migrated; every operation waits for it. */
  private readonly ready: Promise<void>;
  private readonly inflight = new Set<Promise<unknown>>();
  protected closed = false;
  private graphs?: PgGraphCheckpoints;
  /** The URL's password, kept only to scrub it from any message that might echo it. */
  private readonly secret: string | undefined;
  private closing: Promise<void> | undefined;
  protected readonly wakeups: PgWakeups;

  constructor(options: PostgresStoreOptions) {
    if (!options.pool && !options.connectionString)
      throw new BatonError('INVALID_OPTION', 'a Postgres store needs a connectionString or a pool');
    const url = options.connectionString ? parsePostgresUrl(options.connectionString) : undefined;
    this.schema = options.schema ?? url?.schema ?? DEFAULT_SCHEMA;
    if (this.schema.length === 0 || this.schema.length > 63)
      throw new BatonError('INVALID_OPTION', `schema must be 1 to 63 characters, got "${this.schema}"`);
    this.ownsPool = !options.pool;
    const pool =
      options.pool ??
      new pg.Pool({
        connectionString: url?.connectionString,
        max: options.maxConnections ?? 10,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        application_name: 'baton',
      });
    // An idle connection the server drops emits 'error' on the pool; unhandled, it would end the process.
    if (this.ownsPool) pool.on('error', () => {});
    this.location = url?.redacted ?? describePool(pool);
    this.secret = url?.password;
    const clock = options.clock ?? systemClock;
    this.ctx = new PgContext(
      pool,
      tablesOf(this.schema),
      clock,
      options.defaultTtlMs ?? DEFAULT_TTL_MS,
      this.location,
    );
    const connectTimeout = options.connectTimeoutMs ?? 10_000;
    const mode = options.wakeups ?? url?.wakeups ?? 'listen';
    // A transaction-mode pooler hands each transaction another session: no prepared statements.
    this.ctx.pollReads.prepare = mode !== 'poll';
    this.wakeups = new PgWakeups({
      mode,
      connection: url
        ? { connectionString: url.connectionString, connectionTimeoutMillis: connectTimeout }
        : (pool.options as pg.ClientConfig),
      pool,
      schema: this.schema,
      clock,
    });
    this.ctx.wakeups = this.wakeups;
    this.ready = migrate(pool, this.ctx.t, clock.now(), this.location, options.mustExist ?? false).catch(
      (err: unknown) => {
        throw redactError(
          err instanceof BatonError ? err : openError(this.location, this.schema, err),
          this.secret,
        );
      },
    );
    // Reported by open() and by every operation; this only keeps it from counting as unhandled.
    this.ready.catch(() => {});
  }

  /** The pool, for db_query references and tools that read Baton's tables (schema-qualified). */
  get pool(): pg.Pool {
    return this.ctx.pool;
  }

  /**
   * Runs one SELECT for a db_query reference (built by Baton's reference resolver: declared tables
   * and columns only, every value bound) in a read-only transaction, BIGINT read as numbers.
   */
  queryReadOnly(text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    return this.op(() => reads.queryReadOnly(this.ctx, text, values));
  }

  /** LangGraph.js checkpoints kept in this schema (`baton/langgraph`), sharing its write queue. */
  get langgraph(): GraphCheckpointStore {
    this.graphs ??= new PgGraphCheckpoints(this.ctx, (fn) => this.op(fn));
    return this.graphs;
  }

  /** Group-commit figures: how many commits and the largest batch so far. */
  get commitStats() {
    return { commits: this.ctx.queue.commits, maxBatch: this.ctx.queue.maxBatch };
  }

  /** Resolves once the schema is ready; rejects (STORE_INVALID) if it cannot be opened. */
  async open(): Promise<this> {
    await this.ready;
    return this;
  }

  /** Runs an operation once the schema is ready, refusing it after close and tracking it until done. */
  protected op<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new BatonError('STORE_CLOSED', `the store at ${this.location} is closed`));
    const p = this.ready.then(fn).catch((err: unknown) => {
      // A read on a dropped connection, a pool that cannot connect: the database, not the call.
      throw isConnectionLoss(err) ? redactError(storeUnavailable(this.location, err), this.secret) : err;
    });
    this.inflight.add(p);
    const forget = () => this.inflight.delete(p);
    p.then(forget, forget);
    return p;
  }

  onEvents(listener: EventListener) {
    return this.ctx.onEvents(listener);
  }

  onWake(listener: (channel: WakeChannel) => void): () => void {
    if (this.closed) return () => {};
    return this.wakeups.subscribe(listener);
  }

  get hinting(): boolean {
    return this.wakeups.live;
  }

  /** Warnings and figures about the database (autovacuum, xmin horizon, clock skew, LISTEN, table sizes). */
  health(): Promise<StoreHealth> {
    return this.op(() => storeHealth(this.ctx, this.wakeups));
  }

  /** Wake-up figures: notifications sent and received, LISTEN reconnects. */
  get wakeupStats() {
    return { ...this.wakeups.stats, listening: this.wakeups.live };
  }

  /** Refuses new work, waits for what is in flight (queued writes commit), then ends an owned pool. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      await Promise.allSettled([this.ready, ...this.inflight]);
      await this.ctx.queue.idle();
      await this.wakeups.close();
      if (this.ownsPool) await this.ctx.pool.end();
    })();
    return this.closing;
  }
}
