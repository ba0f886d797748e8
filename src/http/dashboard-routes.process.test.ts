/**
 * The dashboard's routes through the handler (e2e lane: a checkout builds the bundle with esbuild,
 * a child process, when it is missing): one shell for every page URL with its mount path, strict
 * security headers, hashed assets cached for good, no token needed for the shell but for the data,
 * `readOnly` refusing changes, and the dashboard off unless asked for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createHttpHandler, type HttpHandler } from './create-http-handler.ts';
import type { HttpOptions } from './http-options.ts';

let rt: TestRuntime | undefined;
let handler: HttpHandler | undefined;
afterEach(async () => {
  handler?.close();
  await rt?.dispose();
  rt = undefined;
});

const TOKEN = 'a-long-enough-test-token';

function setup(options: HttpOptions) {
  rt = testRuntime({ worker: false });
  handler = createHttpHandler(rt.baton, options);
  const h = handler;
  return (path: string, init: RequestInit = {}) => h(new Request(`http://baton.test${path}`, init));
}

describe('GET /dashboard', () => {
  it('serves the shell for every page URL, with its mount path and strict headers', async () => {
    const get = setup({ dashboard: true, basePath: '/ops', token: TOKEN });
    for (const path of [
      '/ops/dashboard',
      '/ops/dashboard/',
      '/ops/dashboard/runs/run_x',
      '/ops/dashboard/decisions',
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await r.text();
      expect(html).toContain('&quot;root&quot;:&quot;/ops/dashboard&quot;');
      expect(html).toContain('&quot;auth&quot;:true');
      expect(html).toMatch(/src="\/ops\/dashboard\/static\/app\.js\?v=[\w-]{16}"/);
    }
    const html = await (await get('/ops/dashboard/')).text();
    const src = /src="([^"]+)"/.exec(html)?.[1] as string;
    const js = await get(src);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await js.text()).length).toBeGreaterThan(10_000);
    const unversioned = await get('/ops/dashboard/static/app.css');
    expect(unversioned.headers.get('cache-control')).toBe('no-cache');
    expect((await get('/ops/dashboard/static/..%2F..%2Fpackage.json')).status).toBe(404);
    expect((await get('/ops/dashboard/static/nope.js')).status).toBe(404);
    // The data still needs the token.
    expect((await get('/ops/runs')).status).toBe(401);
    expect((await get('/ops/events')).status).toBe(401);
  });

  it('is off unless asked for; readOnly refuses every change with 403 READ_ONLY', async () => {
    const off = setup({});
    expect((await off('/dashboard/')).status).toBe(404);
    handler?.close();
    await rt?.dispose();
    const ro = setup({ dashboard: true, readOnly: true });
    expect((await ro('/dashboard/')).status).toBe(200);
    expect((await ro('/runs')).status).toBe(200);
    for (const path of ['/runs', '/runs/x/cancel', '/runs/x/decisions', '/bulk/cancel', '/runs/x/resume']) {
      const r = await ro(path, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(r.status, path).toBe(403);
      expect(((await r.json()) as { error: string }).error).toBe('READ_ONLY');
    }
  });

  it('refuses an option that is not a boolean, naming it', () => {
    rt = testRuntime({ worker: false });
    expect(() => createHttpHandler(rt?.baton as TestRuntime['baton'], { dashboard: 'yes' as never })).toThrow(
      /dashboard/,
    );
  });
});
