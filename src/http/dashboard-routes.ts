/**
 * `GET <basePath>/dashboard[/…]`: the dashboard's HTML shell for every page URL (so a shared or
 * reloaded `/dashboard/runs/<id>` works) and its bundle under `/dashboard/static/`. The shell is
 * told where it is mounted from the matched route, so it also works inside a user's own server
 * (`parent.route('/ops', handler.app)`). Strict headers: the page loads nothing from elsewhere.
 */
import type { Context, Hono } from 'hono';
import { routePath } from 'hono/route';
import { dashboardShell, loadDashboardAssets } from '../dashboard/index.ts';
import type { ResolvedHttpOptions } from './http-options.ts';
import { HttpCodes, HttpProblem } from './wire-errors.ts';

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** The dashboard's own path as the client sees it, e.g. "/ops/api/dashboard". */
function rootOf(c: Context): string {
  return routePath(c, -1).replace(/\/\*$/, '').replace(/\/$/, '');
}

async function shell(c: Context, options: ResolvedHttpOptions): Promise<Response> {
  const assets = await loadDashboardAssets();
  const html = dashboardShell(assets, rootOf(c), {
    readOnly: options.readOnly,
    auth: options.token !== undefined,
  });
  return new Response(html, {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
  });
}

export function mountDashboard(app: Hono, options: ResolvedHttpOptions): void {
  app.get('/dashboard/static/:file', async (c) => {
    const assets = await loadDashboardAssets();
    const file = assets.files.get(c.req.param('file'));
    if (!file)
      throw new HttpProblem(404, HttpCodes.routeNotFound, `no dashboard file ${c.req.param('file')}`);
    const versioned = c.req.query('v') === file.hash;
    return new Response(file.body as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: {
        'content-type': file.type,
        // A URL carrying the content hash never changes; anything else is revalidated.
        'cache-control': versioned ? 'public, max-age=31536000, immutable' : 'no-cache',
        etag: `"${file.hash}"`,
        ...SECURITY_HEADERS,
      },
    });
  });
  app.get('/dashboard', (c) => shell(c, options));
  app.get('/dashboard/*', (c) => shell(c, options));
}
