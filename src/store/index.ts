/** Storage: the Store port, its records, and the embedded SQLite implementation. */
export type * from './records.ts';
export {
  DEFAULT_TTL_MS,
  listMigrations,
  openSqliteStore,
  SqliteStore,
  type SqliteStoreOptions,
} from './sqlite/index.ts';
export type * from './store.ts';
