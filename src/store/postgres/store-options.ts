import type pg from 'pg';
import type { Clock } from '../../time/index.ts';
import type { WakeupMode } from './wakeups.ts';

export interface PostgresStoreOptions {
  /** Where the database is, e.g. `postgres://baton@db:5432/baton`. Give this or `pool`. */
  connectionString?: string;
  /** A pool the application owns; the store uses it and leaves it open on close. */
  pool?: pg.Pool;
  /** The schema holding Baton's tables; created on first open. @default 'baton' */
  schema?: string;
  /** @default systemClock */
  clock?: Clock;
  /** How long finished runs are kept when they carry no TTL of their own. @default 24 h */
  defaultTtlMs?: number;
  /** Connections in the pool the store creates (one writes at a time; the rest serve reads). @default 10 */
  maxConnections?: number;
  /** Refuse (STORE_INVALID) a schema that holds no Baton store yet instead of creating it. @default false */
  mustExist?: boolean;
  /** How long the store's own pool waits for a connection before failing. @default 10000 */
  connectTimeoutMs?: number;
  /**
   * Cross-process wake-ups: 'listen' keeps one LISTEN connection outside the pool (opened when a
   * worker or a follower subscribes) and polls slowly behind it; 'poll' never listens (for
   * transaction-mode poolers such as PgBouncer, and serverless). Also `?wakeups=poll` in the URL.
   * @default 'listen'
   */
  wakeups?: WakeupMode;
}

export const DEFAULT_SCHEMA = 'baton';
