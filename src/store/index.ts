/** Storage: the Store port, its records, the embedded SQLite store, and the choice of store by URL. */

export type * from './langgraph-records.ts';
export { type OpenStoreOptions, openStore, storeAt } from './open-store.ts';
export { isPostgresUrl, PostgresStore } from './postgres/index.ts';
export type * from './records.ts';
export {
  DEFAULT_TTL_MS,
  listMigrations,
  openSqliteStore,
  SqliteStore,
  type SqliteStoreOptions,
} from './sqlite/index.ts';
export type * from './store.ts';
