/** Storage: the Store port, its records, the embedded SQLite store, and the choice of store by URL. */

export type * from './langgraph-records.ts';
export { type OpenStoreOptions, openStore, storeAt } from './open-store.ts';
export type { PostgresStore, PostgresStoreOptions } from './postgres/index.ts';
// Postgres by type only: its store and node-postgres load when a URL is opened (`baton/postgres`
// exports the class itself).
export {
  hasPostgresReads,
  isPostgresStore,
  isPostgresUrl,
  type PostgresReads,
} from './postgres/lazy.ts';
export type * from './records.ts';
export {
  DEFAULT_TTL_MS,
  listMigrations,
  openSqliteStore,
  type SqliteConstructor,
  type SqliteDatabase,
  type SqliteDriver,
  type SqlitePackage,
  SqliteStore,
  type SqliteStoreOptions,
  sqliteDriver,
} from './sqlite/index.ts';
export type * from './store.ts';
