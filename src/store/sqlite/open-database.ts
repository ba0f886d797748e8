/**
 * Opens a Baton SQLite file: refuses files that are not SQLite or not Baton's, sets the durability
 * pragmas, and applies numbered migrations. Migrations run under BEGIN IMMEDIATE, so two workers
 * starting at once serialize and the second sees the first's work as already applied.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../../core/index.ts';
import { type SqliteDatabase, sqliteDriver } from './driver.ts';

export interface OpenOptions {
  /** Fail instead of creating a new database when the file does not exist. @default false */
  mustExist?: boolean;
  /** How long a writer waits for another process's write lock. @default 5000 */
  busyTimeoutMs?: number;
  /**
   * FULL makes every commit survive power loss (one fsync of the WAL per commit); NORMAL survives a
   * process crash but may lose the last commits on power loss. @default 'FULL'
   */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Open for reading only (`baton ls`, `show`): nothing is written, no migration is applied — a
   * file that needs one is refused — and every write fails with STORE_INVALID. @default false
   */
  readonly?: boolean;
}

const SQLITE_HEADER = 'SQLite format 3\0';
const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
export const FORMAT_MARKER = 'baton';

export function openDatabase(path: string, options: OpenOptions = {}): SqliteDatabase {
  const isMemory = path === ':memory:';
  const readonly = options.readonly ?? false;
  const mustExist = (options.mustExist ?? false) || readonly;
  if (!isMemory) {
    if (!existsSync(path) && !mustExist) createNew(path);
    checkFile(path, mustExist);
  }
  let db: SqliteDatabase;
  try {
    const { Database } = sqliteDriver();
    db = new Database(path, { fileMustExist: mustExist, readonly });
  } catch (err) {
    throw storeError(path, err);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
    // Look before touching: switching to WAL rewrites the header of someone else's database.
    checkIsBaton(db, path);
    if (readonly) {
      checkSchemaReadable(db, path);
      return db;
    }
    if (!isMemory) db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    // Each write of a group commit runs in its own savepoint, whose journal (the pages it changed,
    // as they were) SQLite spilled to a temporary file past 64 KB: as many page write()s as the WAL
    // got. It only serves ROLLBACK TO within the transaction, so it lives in memory.
    db.pragma('temp_store = MEMORY');
    db.pragma('foreign_keys = OFF');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err instanceof BatonError ? err : storeError(path, err);
  }
}

/**
 * A new database is built beside `path` and linked into place in one step, so no process ever sees
 * a half-made file — and an empty file at `path` is never one of Baton's (it is refused, not
 * silently set up: it may be a database that lost its content). If another process links its
 * file first, that one is used. New files use incremental auto-vacuum, so the space runs swept by
 * the TTL leave can be returned to the disk (see ARCHITECTURE, "Retention").
 */
function createNew(path: string): void {
  const tmp = `${path}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const { Database } = sqliteDriver();
    const db = new Database(tmp);
    try {
      db.pragma('auto_vacuum = INCREMENTAL');
      db.pragma('journal_mode = WAL');
      migrate(db);
    } finally {
      db.close(); // checkpoints the WAL into the file and removes it
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } catch (err) {
    throw err instanceof BatonError ? err : storeError(path, err);
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(tmp + suffix, { force: true });
  }
}

/** A read-only open applies no migration: a file that still needs one cannot be read correctly. */
function checkSchemaReadable(db: SqliteDatabase, path: string): void {
  const applied = new Set(
    (db.prepare('SELECT version FROM baton_migrations').all() as Array<{ version: number }>).map(
      (r) => r.version,
    ),
  );
  const missing = listMigrations().filter((m) => !applied.has(m.version));
  if (missing.length > 0)
    throw new BatonError(
      'STORE_INVALID',
      `${path} needs ${missing.length} migration(s) (${missing[0]?.name}…) that a read-only open cannot apply; open it once read-write (e.g. baton gc)`,
      { data: { path, missing: missing.map((m) => m.name) } },
    );
}

function checkFile(path: string, mustExist: boolean): void {
  if (!existsSync(path)) {
    if (mustExist)
      throw new BatonError('STORE_INVALID', `no Baton database at ${path} (the file does not exist)`, {
        data: { path },
      });
    return;
  }
  const st = statSync(path);
  if (st.isDirectory())
    throw new BatonError('STORE_INVALID', `${path} is a directory, not a Baton database file`, {
      data: { path },
    });
  if (!st.isFile())
    throw new BatonError('STORE_INVALID', `${path} is not a regular file, so not a Baton database`, {
      data: { path },
    });
  if (st.size === 0)
    throw new BatonError(
      'STORE_INVALID',
      `${path} is an empty file (0 bytes), not a Baton database; it is left as it is: remove it, or pass another --db, to start a new one`,
      { data: { path } },
    );
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(16);
    readSync(fd, head, 0, 16, 0);
    if (head.toString('latin1') !== SQLITE_HEADER)
      throw new BatonError('STORE_CORRUPT', `${path} is not a SQLite database (its header is wrong)`, {
        data: { path },
      });
  } finally {
    closeSync(fd);
  }
}

function checkIsBaton(db: SqliteDatabase, path: string): void {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
  )
    .map((t) => t.name)
    .filter((n) => !n.startsWith('sqlite_'));
  if (tables.length === 0) return;
  if (!tables.includes('baton_meta')) {
    throw new BatonError(
      'STORE_INVALID',
      `${path} is a SQLite database but not Baton's (it has tables ${tables.slice(0, 5).join(', ')}); pass another --db`,
      { data: { path, tables } },
    );
  }
  const marker = db.prepare("SELECT value FROM baton_meta WHERE key = 'format'").get() as
    | { value: string }
    | undefined;
  if (marker?.value !== FORMAT_MARKER)
    throw new BatonError('STORE_INVALID', `${path} has a baton_meta table without Baton's format marker`, {
      data: { path },
    });
}

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f, sql: readFileSync(`${dir}/${f}`, 'utf8') }));
}

function migrate(db: SqliteDatabase): void {
  const migrations = listMigrations();
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(
      'CREATE TABLE IF NOT EXISTS baton_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
    );
    const applied = new Set(
      (db.prepare('SELECT version FROM baton_migrations').all() as Array<{ version: number }>).map(
        (r) => r.version,
      ),
    );
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (newest > known)
      throw new BatonError(
        'STORE_INVALID',
        `the database was written by a newer Baton (schema ${newest}, this one knows ${known}); upgrade Baton`,
        { data: { schema: newest, known } },
      );
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO baton_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        // Migrations run before any clock is wired in; the time is informational only.
        Math.floor(performance.timeOrigin + performance.now()),
      );
    }
    db.prepare("INSERT OR IGNORE INTO baton_meta (key, value) VALUES ('format', ?)").run(FORMAT_MARKER);
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}

/** SQLite's own verdict that the file is not (or no longer) a sound database. */
export function isDamaged(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

export function storeError(path: string, err: unknown): BatonError {
  if (isDamaged(err))
    return new BatonError(
      'STORE_CORRUPT',
      `${path} is corrupted or not a SQLite database: ${(err as Error).message}`,
      {
        cause: err,
        data: { path },
      },
    );
  if ((err as { code?: unknown } | null)?.code === 'SQLITE_READONLY')
    return new BatonError('STORE_INVALID', `${path} is open read-only: ${(err as Error).message}`, {
      cause: err,
      data: { path },
    });
  return new BatonError('STORE_INVALID', `cannot open ${path}: ${(err as Error).message}`, {
    cause: err,
    data: { path },
  });
}
