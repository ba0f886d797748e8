/**
 * Applies the numbered migrations of `./migrations/` to the store's schema. Everything runs in one
 * transaction under an advisory lock keyed by the schema, so two processes opening a new database at
 * once serialize: the second finds the work done. A schema written by a newer Baton is refused
 * rather than written with assumptions that may no longer hold, and so is a schema that holds
 * someone else's tables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { BatonError } from '../../core/index.ts';
import { LOCK_MIGRATE, quoteIdent, select, type Tables } from './sql.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const FORMAT_MARKER = 'baton';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listPostgresMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f, sql: readFileSync(`${dir}/${f}`, 'utf8') }));
}

export async function migrate(
  pool: pg.Pool,
  t: Tables,
  now: number,
  location: string,
  mustExist = false,
): Promise<void> {
  const migrations = listPostgresMigrations();
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    await select(client, 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_MIGRATE, t.schema]);
    const tables = (
      await select<{ name: string }>(
        client,
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
        [t.schema],
      )
    ).map((r) => r.name);
    await checkIsBaton(client, t, tables, location);
    if (mustExist && tables.length === 0)
      throw new BatonError(
        'STORE_INVALID',
        `no Baton store in schema ${t.schema} at ${location} (nothing was created; start a worker or a run there first)`,
        { data: { schema: t.schema, location } },
      );
    // Created only when missing: a role that may use the store need not be allowed to create in it.
    const [schema] = await select(client, 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [t.schema]);
    if (!schema) await client.query(`CREATE SCHEMA ${quoteIdent(t.schema)}`);
    // Unqualified names in the migration files land in the store's schema; SET LOCAL ends with
    // this transaction, so a pool shared with other code keeps its own search_path.
    await client.query(`SET LOCAL search_path TO ${quoteIdent(t.schema)}`);
    if (!tables.includes('baton_migrations'))
      await client.query(
        `CREATE TABLE ${t.migrations} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`,
      );
    const applied = new Set(
      (await select<{ version: number }>(client, `SELECT version FROM ${t.migrations}`)).map(
        (r) => r.version,
      ),
    );
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known)
      throw new BatonError(
        'STORE_INVALID',
        `the schema ${t.schema} at ${location} was written by a newer Baton (schema ${newest}, this one knows ${known}); upgrade Baton`,
        { data: { schema: t.schema, version: newest, known } },
      );
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await select(client, `INSERT INTO ${t.migrations} (version, name, applied_at) VALUES ($1, $2, $3)`, [
        m.version,
        m.name,
        now,
      ]);
    }
    await select(client, `INSERT INTO ${t.meta} (key, value) VALUES ('format', $1) ON CONFLICT DO NOTHING`, [
      FORMAT_MARKER,
    ]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError as Error;
    });
    throw err instanceof BatonError ? err : openError(location, t.schema, err);
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** Refuses a schema that holds tables but is not a Baton store, without touching it. */
async function checkIsBaton(
  client: pg.PoolClient,
  t: Tables,
  tables: readonly string[],
  location: string,
): Promise<void> {
  if (tables.length === 0) return;
  if (!tables.includes('baton_meta'))
    throw new BatonError(
      'STORE_INVALID',
      `the schema ${t.schema} at ${location} holds tables that are not Baton's (${tables.slice(0, 5).join(', ')}); pass another schema`,
      { data: { schema: t.schema, tables } },
    );
  const [marker] = await select<{ value: string }>(
    client,
    `SELECT value FROM ${t.meta} WHERE key = 'format'`,
  );
  if (marker?.value !== FORMAT_MARKER)
    throw new BatonError(
      'STORE_INVALID',
      `the schema ${t.schema} at ${location} has a baton_meta table without Baton's format marker`,
      { data: { schema: t.schema } },
    );
}

export function openError(location: string, schema: string, err: unknown): BatonError {
  return new BatonError(
    'STORE_INVALID',
    `cannot open the Postgres store at ${location} (schema ${schema}): ${(err as Error).message}`,
    { cause: err, data: { location, schema } },
  );
}
