/**
 * Module hooks for the benchmark: each `.ts` file of this repository is compiled by esbuild with the
 * options `npm run build` bundles the package with (ES modules, target node20.19, no `keepNames`).
 *
 * Why not tsx, which the tests use: tsx always compiles with esbuild's `keepNames`, which wraps every
 * named function and closure in a call that defines its `name` when it is created. That costs each
 * closure a property array and a call, and Baton makes several closures per run and per attempt: the
 * same code ran with ~18% less Node CPU per run on Postgres when built without it, and an attempt
 * waiting on its timeout held 11.8 KB of heap through tsx against 9.8 KB built (29 Nov 2026). The
 * peers in the benchmark run their published JavaScript; Baton is measured the same way. Files under
 * node_modules are left to Node.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

const TYPESCRIPT = /\.[cm]?ts$/;

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url) || url.includes('/node_modules/'))
    return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    sourcemap: 'inline',
    sourcefile: path,
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  });
  return { format: 'module', source: code, shortCircuit: true };
}
