/**
 * The Postgres store is loaded when a `postgres://` URL is opened: `import 'baton'` loads neither
 * node-postgres nor the store's code, so a SQLite user pays nothing for it; `baton/postgres`
 * exports it statically.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

function loadedBy(script: string, entry: string): string[] {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      resolve(root, 'test/fixtures/record-loads.mjs'),
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `${script}
      await new Promise((r) => setTimeout(r, 50)); // let the hook thread's last messages arrive
      console.log(JSON.stringify([...globalThis.__loadedUrls]));`,
      entry,
    ],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as string[];
}

const PG = /node_modules\/(pg|pg-pool|pg-protocol)\//;
const STORE = /\/src\/store\/postgres\/postgres-store\.ts$/;

describe('loading the Postgres store', () => {
  it('importing baton and opening a SQLite store loads neither pg nor the Postgres store', () => {
    const urls = loadedBy(
      `const { createBaton } = await import(process.argv[1]);
       const baton = createBaton({ store: ':memory:', worker: false });
       await baton.close();`,
      resolve(root, 'src/index.ts'),
    );
    expect(urls.length).toBeGreaterThan(50); // the hook saw the import graph
    expect(urls.filter((u) => PG.test(u) || STORE.test(u))).toEqual([]);
  });

  it('a postgres:// URL loads them when the store is opened (no connection needed)', () => {
    const urls = loadedBy(
      `const { createBaton } = await import(process.argv[1]);
       const baton = createBaton({ store: 'postgres://nobody@127.0.0.1:1/none', worker: false });
       await baton.store.getRun('x').catch(() => {});
       await baton.close();`,
      resolve(root, 'src/index.ts'),
    );
    expect(urls.some((u) => PG.test(u))).toBe(true);
    expect(urls.some((u) => STORE.test(u))).toBe(true);
  });

  it('the baton/postgres subpath exports the store statically', () => {
    const urls = loadedBy(
      `const m = await import(process.argv[1]);
       if (typeof m.PostgresStore !== 'function') throw new Error('no PostgresStore export');`,
      resolve(root, 'src/store/postgres/index.ts'),
    );
    expect(urls.some((u) => PG.test(u))).toBe(true);
  });
});
