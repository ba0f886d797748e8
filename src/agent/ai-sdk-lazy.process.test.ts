import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The AI SDK costs ~55 ms of CPU to load beyond zod: `import 'baton'` must not load it (a plain task and a
 * restarted worker never need it); the first agent loop does.
 */

// A module loader hook that prints every package a module is loaded from.
const HOOK = `data:text/javascript,${encodeURIComponent(`
  import { register } from 'node:module';
  register('data:text/javascript,' + encodeURIComponent(\`
    export async function load(url, ctx, next) {
      const m = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)\\\\//.exec(url);
      if (m) process.stderr.write('loaded-package ' + m[1] + '\\\\n');
      return next(url, ctx);
    }\`));`)}`;

function packagesLoadedBy(script: string): Set<string> {
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      HOOK,
      '--input-type=module',
      '-e',
      script,
      resolve(import.meta.dirname, '../index.ts'),
    ],
    { cwd: resolve(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 60_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return new Set([...r.stderr.matchAll(/^loaded-package (\S+)$/gm)].map((m) => m[1] as string));
}

describe('the AI SDK', () => {
  it('is not loaded by importing baton', () => {
    // zod is imported after baton only to show the hook sees packages: baton itself loads none at
    // import (zod too is loaded on first use, deps/zod.ts).
    const loaded = packagesLoadedBy(`await import(process.argv[1]); await import('zod');`);
    expect(loaded.has('zod'), 'the hook sees packages').toBe(true);
    expect([...loaded].filter((p) => p === 'ai' || p.startsWith('@ai-sdk/'))).toEqual([]);
  });
});
