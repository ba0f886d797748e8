/** The scale-out Postgres store (node-postgres, one schema per store, group commit, SKIP LOCKED claims). */
export { listPostgresMigrations } from './migrate.ts';
export {
  DEFAULT_SCHEMA,
  openPostgresStore,
  PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.ts';
export { isPostgresUrl, type PostgresUrl, parsePostgresUrl, redactUnparsed } from './url.ts';
