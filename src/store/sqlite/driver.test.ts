import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { abortsWith12, driverCandidates, NODE_API_FOR_13, sqliteDriver } from './driver.ts';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};

describe('the SQLite driver', () => {
  it('tries better-sqlite3 13 first only where Node-API 10 exists, and always falls back to 12', () => {
    // Node 20 has Node-API 9 and 22.0-22.13 too: 13 segfaults there.
    expect(driverCandidates(9)).toEqual(['better-sqlite3']);
    expect(driverCandidates(NODE_API_FOR_13)).toEqual(['better-sqlite3-13', 'better-sqlite3']);
    expect(driverCandidates(11)).toEqual(['better-sqlite3-13', 'better-sqlite3']);
    expect(abortsWith12(22)).toBe(false);
    expect(abortsWith12(24)).toBe(true);
  });

  it('loads the best line for the running Node, at the version package.json pins', () => {
    // On the Node 22 and 24 lanes this proves `npm ci --engine-strict` installed the optional 13.
    const want = driverCandidates(Number(process.versions.napi))[0];
    const driver = sqliteDriver();
    expect(driver.package).toBe(want);
    const pinned =
      driver.package === 'better-sqlite3'
        ? pkg.dependencies['better-sqlite3']
        : pkg.optionalDependencies['better-sqlite3-13']?.replace('npm:better-sqlite3@', '');
    expect(driver.version).toBe(pinned);
    expect(sqliteDriver()).toBe(driver);
  });

  it('opens a working database with either line', () => {
    const { Database } = sqliteDriver();
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (v BLOB)');
      db.prepare('INSERT INTO t VALUES (?)').run(Buffer.from([1, 2, 3]));
      const row = db.prepare('SELECT v FROM t').get() as { v: Buffer };
      expect([...row.v]).toEqual([1, 2, 3]);
      expect(db.inTransaction).toBe(false);
    } finally {
      db.close();
    }
  });

  it('is the only file that loads better-sqlite3 (a second loader puts 12 back on Node 24)', () => {
    // A test that opened `better-sqlite3` itself aborted the Node 24 lane at teardown while Baton
    // ran on 13 (issue 10). Type imports are fine: they load nothing.
    const root = new URL('../../../', import.meta.url).pathname;
    const load =
      /(?:^|\n)\s*import\s+(?!type\b)[^;]*?from\s+['"]better-sqlite3(?:-13)?['"]|(?:require|import)\(\s*['"]better-sqlite3(?:-13)?['"]\s*\)/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'results') walk(path);
        } else if (/\.(?:ts|mts|js|mjs)$/.test(entry.name) && load.test(readFileSync(path, 'utf8'))) {
          offenders.push(relative(root, path));
        }
      }
    };
    for (const dir of ['src', 'test', 'bench', 'examples']) walk(join(root, dir));
    expect(offenders.filter((f) => f !== 'src/store/sqlite/driver.ts')).toEqual([]);
  });
});
