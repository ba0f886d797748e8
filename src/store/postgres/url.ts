/**
 * Postgres URLs as users hand them to Baton (`--db`, `BATON_DATABASE_URL`, `createBaton({ store })`):
 * checked before anything connects, with Baton's own `schema` parameter taken out, and a form
 * without the password for every message. A password must never reach an error or a log line.
 */
import type pg from 'pg';
import { BatonError } from '../../core/index.ts';

export interface PostgresUrl {
  /** What node-postgres gets: the URL without Baton's `schema` parameter. */
  connectionString: string;
  /** The URL without its password, for messages. */
  redacted: string;
  password: string | undefined;
  /** `?schema=name`: the schema holding Baton's tables. */
  schema: string | undefined;
  /** `?wakeups=poll`: no LISTEN (behind a transaction-mode pooler, serverless). */
  wakeups: 'listen' | 'poll' | undefined;
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** True for a `postgres://` or `postgresql://` URL (anything else is a SQLite file path). */
export function isPostgresUrl(target: string): boolean {
  return POSTGRES_URL.test(target);
}

export function parsePostgresUrl(text: string): PostgresUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(text, 'it cannot be parsed as a URL (percent-encode special characters in the password)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw invalid(text, `the scheme is "${url.protocol}", expected postgres: or postgresql:`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database.includes('/')) throw invalid(text, `"${database}" is not a database name`);
  const password = url.password
    ? decodeURIComponent(url.password)
    : (url.searchParams.get('password') ?? undefined);
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && (schema.length === 0 || schema.length > 63))
    throw invalid(text, 'the schema parameter must be 1 to 63 characters');
  const wakeups = url.searchParams.get('wakeups') ?? undefined;
  if (wakeups !== undefined && wakeups !== 'listen' && wakeups !== 'poll')
    throw invalid(text, `the wakeups parameter must be listen or poll, got "${wakeups}"`);
  url.searchParams.delete('schema');
  url.searchParams.delete('wakeups');
  const connectionString = url.toString();
  const shown = new URL(connectionString);
  if (shown.password) shown.password = '***';
  for (const key of [...shown.searchParams.keys()])
    if (/password/i.test(key)) shown.searchParams.set(key, '***');
  if (schema !== undefined) shown.searchParams.set('schema', schema);
  if (wakeups !== undefined) shown.searchParams.set('wakeups', wakeups);
  return { connectionString, redacted: shown.toString(), password, schema, wakeups };
}

/** Best effort for text that is not even a URL: hide what sits between `user:` and the last `@`. */
export function redactUnparsed(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):.*@/i, '$1:***@')
    .replace(/(password\s*=\s*)[^&\s]+/gi, '$1***');
}

function invalid(text: string, why: string): BatonError {
  return new BatonError(
    'STORE_INVALID',
    `${redactUnparsed(text)} is not a usable Postgres URL: ${why} (expected postgres://user:password@host:5432/database)`,
    { data: { location: redactUnparsed(text) } },
  );
}

/**
 * Removes the password from an error's message and its causes' (a driver may echo the URL it was
 * given); returns the same error.
 */
export function redactError<E>(err: E, secret: string | undefined): E {
  if (!secret) return err;
  const forms = [...new Set([secret, encodeURIComponent(secret)])];
  let e: unknown = err;
  for (let depth = 0; e instanceof Error && depth < 5; depth++) {
    let message = e.message;
    for (const f of forms) message = message.replaceAll(f, '***');
    if (message !== e.message) e.message = message;
    if (e.stack) {
      let stack = e.stack;
      for (const f of forms) stack = stack.replaceAll(f, '***');
      e.stack = stack;
    }
    e = e.cause;
  }
  return err;
}

/** A pool's settings without a password, for messages. */
export function describePool(pool: pg.Pool): string {
  const o = pool.options as pg.PoolConfig;
  if (o.connectionString) return parsePostgresUrl(o.connectionString).redacted;
  const user = o.user ? `${o.user}@` : '';
  return `postgres://${user}${o.host ?? 'localhost'}:${o.port ?? 5432}/${o.database ?? ''}`;
}
