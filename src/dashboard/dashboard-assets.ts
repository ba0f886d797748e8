/**
 * The dashboard's files: the bundle (`app.js`, `app.css`) built by esbuild at build time, found
 * beside this module once compiled (`dist/dashboard/static`) or, when Baton runs from its sources,
 * in `dist/dashboard/static` of the checkout — built there first when missing or older than the
 * app's sources (only a checkout has the sources and esbuild). The HTML shell is rendered per
 * request with the page's config, so the same files serve any base path.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../core/index.ts';

export interface DashboardAssets {
  /** Name → content, e.g. "app.js". */
  readonly files: ReadonlyMap<string, { body: Uint8Array; type: string; hash: string }>;
}

export interface DashboardConfig {
  /** Hide every action and refuse them on the server. */
  readOnly: boolean;
  /** The API requires a bearer token (the page asks for it once per tab). */
  auth: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Where the bundle lives, building it first when Baton runs from a checkout's sources. */
async function staticDir(): Promise<string> {
  const compiled = join(here, 'static');
  const sources = join(here, 'app');
  if (!existsSync(join(sources, 'main.tsx'))) return compiled;
  const built = join(here, '..', '..', 'dist', 'dashboard', 'static');
  const bundle = join(built, 'app.js');
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < newestMtime(sources)) {
    const build = (await import(join(sources, 'build.ts'))) as { buildDashboard(out: string): Promise<void> };
    await build.buildDashboard(built);
  }
  return built;
}

function contentHash(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 16);
}

let loaded: Promise<DashboardAssets> | undefined;

/** Reads the bundle once per process. */
export function loadDashboardAssets(): Promise<DashboardAssets> {
  loaded ??= (async () => {
    const dir = await staticDir();
    if (!existsSync(join(dir, 'app.js')))
      throw new BatonError(
        'INVALID_OPTION',
        `the dashboard bundle is missing at ${dir}: run "npm run build" (a package from the registry ships it)`,
        { data: { field: 'dashboard' } },
      );
    const files = new Map<string, { body: Uint8Array; type: string; hash: string }>();
    for (const name of readdirSync(dir)) {
      const ext = name.slice(name.lastIndexOf('.'));
      const type = TYPES[ext];
      if (!type) continue;
      const body = new Uint8Array(readFileSync(join(dir, name)));
      files.set(name, { body, type, hash: contentHash(body) });
    }
    return { files };
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The page for every dashboard URL (`root` is the dashboard's own path, e.g. "/api/dashboard"):
 * assets by content hash so a new build is never mixed with a cached one; config in a meta tag.
 */
export function dashboardShell(assets: DashboardAssets, root: string, config: DashboardConfig): string {
  const v = (name: string) => assets.files.get(name)?.hash ?? '0';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="baton-dashboard" content="${escapeAttr(JSON.stringify({ ...config, root }))}">
<link rel="icon" href="data:,">
<title>Baton</title>
<link rel="stylesheet" href="${escapeAttr(root)}/static/app.css?v=${v('app.css')}">
<script type="module" src="${escapeAttr(root)}/static/app.js?v=${v('app.js')}"></script>
</head>
<body><div id="app"><noscript>The Baton dashboard needs JavaScript.</noscript></div></body>
</html>
`;
}
