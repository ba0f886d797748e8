/**
 * Bundles the dashboard with esbuild: `src/dashboard/app/main.tsx` (Preact + signals) → `app.js`
 * and `app.css`, minified, no source maps, nothing fetched at run time. `npm run build` runs this
 * into `dist/dashboard/static`; a server running from the sources runs it when the bundle is missing
 * or older than these files.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));

export interface BuiltDashboard {
  /** Bytes per output file. */
  sizes: Record<string, number>;
}

export async function buildDashboard(outdir: string): Promise<BuiltDashboard> {
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(here, 'main.tsx') },
    outdir,
    bundle: true,
    format: 'esm',
    minify: true,
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const sizes: Record<string, number> = {};
  for (const [file, info] of Object.entries(result.metafile.outputs)) sizes[file] = info.bytes;
  return { sizes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2] ?? join(here, '..', '..', '..', 'dist', 'dashboard', 'static');
  const { sizes } = await buildDashboard(out);
  for (const [file, bytes] of Object.entries(sizes))
    process.stdout.write(`${file}  ${(bytes / 1024).toFixed(1)} kB\n`);
}
