/** The embedded SQLite store (better-sqlite3, WAL, synchronous=FULL, group commit). */
export { listMigrations, type OpenOptions } from './open-database.ts';
export { DEFAULT_TTL_MS } from './sqlite-context.ts';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts';
