/**
 * Choosing a store from what a user typed: a `postgres://` URL opens the Postgres store, anything
 * else is a SQLite file path. Used by `createBaton({ store: '…' })` and every CLI command.
 */
import type { Clock } from '../time/index.ts';
// The light door: the Postgres store and node-postgres load only when a postgres:// URL is opened.
import { DeferredPostgresStore, isPostgresUrl, openPostgresAt } from './postgres/lazy.ts';
import { openSqliteStore } from './sqlite/index.ts';
import type { Store } from './store.ts';

export interface OpenStoreOptions {
  clock?: Clock;
  /** Refuse (STORE_INVALID) a database that holds no Baton store yet, creating nothing. @default false */
  mustExist?: boolean;
  defaultTtlMs?: number;
  /** SQLite: open read-only (nothing written, no migration; writes fail). Postgres: ignored. @default false */
  readonly?: boolean;
}

/**
 * The store at `target`, opened synchronously: a Postgres store loads, connects and migrates in
 * the background and reports a problem (STORE_INVALID) from its first operation.
 */
export function storeAt(target: string, options: OpenStoreOptions = {}): Store {
  if (isPostgresUrl(target)) {
    const { readonly: _, ...pg } = options;
    return new DeferredPostgresStore({ connectionString: target, ...pg });
  }
  return openSqliteStore(target, options);
}

/** The store at `target`, ready: a Postgres URL is connected and migrated before this resolves. */
export async function openStore(target: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(target)) {
    const { readonly: _, ...pg } = options;
    return openPostgresAt({ connectionString: target, ...pg });
  }
  return openSqliteStore(target, options);
}
