/**
 * The one place Baton loads its SQLite driver. Two lines of better-sqlite3 are installed, because
 * no single one works on every Node Baton supports:
 *
 * - better-sqlite3 12.x (dependency `better-sqlite3`) derives its objects from Node's raw
 *   `node::ObjectWrap`. From Node 24.19 that class removes an environment cleanup hook in its
 *   destructor, and a Statement or Database collected by a GC that runs with no Node environment
 *   (at process or worker-thread exit, or an idle GC) aborts the whole process
 *   (`RemoveEnvironmentCleanupHook … Assertion failed: (env) != nullptr`).
 * - better-sqlite3 13.x (optional dependency `better-sqlite3-13`, an npm alias) is built on
 *   Node-API and does not abort, but it is compiled for Node-API 10, which Node 20 never got and
 *   Node 22 got in 22.14: on older Nodes its `new Database()` segfaults.
 *
 * So the choice is by the running Node's Node-API version, not its major, and 13 falls back to 12
 * when it is missing (`npm install --omit=optional`, `npm ci --engine-strict` on Node 20 skips it)
 * or cannot load on this platform. Both lines share one API and one set of types.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/** An open database; the same API from either line. */
export type SqliteDatabase = BetterSqlite3.Database;
/** The driver's constructor: `new (sqliteDriver().Database)(path, options)`. */
export type SqliteConstructor = typeof BetterSqlite3;

export type SqlitePackage = 'better-sqlite3-13' | 'better-sqlite3';

export interface SqliteDriver {
  Database: SqliteConstructor;
  /** The package loaded, as Baton's package.json names it. */
  package: SqlitePackage;
  /** Its version, e.g. `13.2.0`. */
  version: string;
  /** The module's resolved file, for a worker thread that opens the same database. */
  resolved: string;
}

/** better-sqlite3 13 asks for Node-API 10 at load time (`NAPI_VERSION=10` in its binding.gyp). */
export const NODE_API_FOR_13 = 10;

/** The packages to try, best first, for a Node with this Node-API version. */
export function driverCandidates(nodeApiVersion: number): readonly SqlitePackage[] {
  return nodeApiVersion >= NODE_API_FOR_13 ? ['better-sqlite3-13', 'better-sqlite3'] : ['better-sqlite3'];
}

/** Whether a Node with this major version aborts with better-sqlite3 12 (see above). */
export function abortsWith12(nodeMajor: number): boolean {
  return nodeMajor >= 24;
}

const require = createRequire(import.meta.url);
let loaded: SqliteDriver | undefined;

/** The driver for this process, loaded on first use (importing Baton loads no native addon). */
export function sqliteDriver(): SqliteDriver {
  loaded ??= loadDriver();
  return loaded;
}

function loadDriver(): SqliteDriver {
  const candidates = driverCandidates(Number(process.versions.napi ?? 0));
  const fallback = candidates[candidates.length - 1] ?? 'better-sqlite3';
  const skipped: string[] = [];
  for (const name of candidates.slice(0, -1)) {
    try {
      const driver = load(name);
      // Both lines load their native addon on the first `new Database()`; open one here, so a
      // platform 13 ships no binary for falls back now rather than failing every open later.
      new driver.Database(':memory:').close();
      return driver;
    } catch (err) {
      skipped.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const driver = load(fallback);
  if (skipped.length > 0 && abortsWith12(Number(process.versions.node.split('.')[0])))
    process.emitWarning(
      `Baton uses better-sqlite3 ${driver.version} because ${skipped.join('; ')}. On Node ${process.versions.node} that line can abort the process when a statement is garbage-collected at exit; install Baton's optional dependencies (npm install without --omit=optional).`,
      { code: 'BATON_SQLITE_DRIVER' },
    );
  return driver;
}

function load(name: SqlitePackage): SqliteDriver {
  return {
    Database: require(name) as SqliteConstructor,
    package: name,
    version: (require(`${name}/package.json`) as { version: string }).version,
    resolved: require.resolve(name),
  };
}
