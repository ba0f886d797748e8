/** The embedded SQLite store (better-sqlite3 12 or 13, see driver.ts; WAL, group commit, each commit fdatasynced off the event loop). */
export {
  type SqliteConstructor,
  type SqliteDatabase,
  type SqliteDriver,
  type SqlitePackage,
  sqliteDriver,
} from './driver.ts';
export { listMigrations, type OpenOptions } from './open-database.ts';
export { DEFAULT_TTL_MS } from './sqlite-context.ts';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts';
