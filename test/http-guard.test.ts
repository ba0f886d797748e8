/**
 * What a web page the user happens to open must not do to the tokenless loopback server (issue 11
 * item 4), over real sockets: a cross-site `text/plain` POST is refused and starts nothing, a
 * request addressed to a foreign `Host` (DNS rebinding) is refused on every route — the API, the
 * event stream and the dashboard — and a foreign `Origin` is refused unless allowed. curl-style
 * requests without `Origin` and the server's own pages keep working.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isBatonError } from '../src/core/index.ts';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { defineTask } from '../src/runtime/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';

let rt: TestRuntime;
let server: HttpServer;
let allowing: HttpServer;

beforeAll(async () => {
  rt = testRuntime();
  rt.baton.register(
    defineTask({ name: 'double', input: z.object({ n: z.number() }), run: async ({ n }) => n * 2 }),
  );
  server = await serveHttp(rt.baton, { dashboard: true });
  allowing = await serveHttp(rt.baton, {
    allowedHosts: ['baton.internal'],
    allowedOrigins: ['https://app.example.com'],
  });
});
afterAll(async () => {
  await server.close();
  await allowing.close();
  await rt.dispose();
});

/** A raw request, so Host and Origin are exactly what a browser under attack would send. */
function send(
  target: HttpServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; code: string | undefined; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        method,
        path,
        headers: { host: `127.0.0.1:${target.port}`, ...headers },
      },
      (res) => {
        let text = '';
        // An event stream never ends by itself: its status and first bytes are enough.
        const sse = String(res.headers['content-type']).startsWith('text/event-stream');
        res.on('data', (d) => {
          text += String(d);
          if (sse) res.destroy();
        });
        const done = () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: string }).error;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode ?? 0, code, type: res.headers['content-type'] });
        };
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const START = JSON.stringify({ task: 'double', input: { n: 2 }, mode: 'async' });

describe('cross-site requests', () => {
  it('refuses a text/plain POST from a foreign page and stores nothing', async () => {
    const before = (await rt.store.listRuns()).length;
    const attack = await send(
      server,
      'POST',
      '/runs',
      { origin: 'https://evil.example', 'content-type': 'text/plain' },
      START,
    );
    expect(attack.status).toBe(403);
    expect(attack.code).toBe('ORIGIN_NOT_ALLOWED');
    // Without an Origin (a form-less fetch from a sandbox, curl without -H) the body must be JSON.
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await send(server, 'POST', '/runs', { 'content-type': type }, START);
      expect([r.status, r.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    }
    const noType = await send(server, 'POST', '/runs', {}, START);
    expect(noType.status).toBe(415);
    expect((await rt.store.listRuns()).length).toBe(before);
  });

  it('serves JSON from curl and from its own pages, and bodiless POSTs', async () => {
    const json = { 'content-type': 'application/json; charset=utf-8' };
    expect((await send(server, 'POST', '/runs', json, START)).status).toBe(202);
    const own = { ...json, origin: `http://127.0.0.1:${server.port}` };
    expect((await send(server, 'POST', '/runs', own, START)).status).toBe(202);
    const [run] = await rt.store.listRuns({ limit: 1 });
    // `curl -X POST …/cancel`: no body, no content type.
    expect((await send(server, 'POST', `/runs/${run?.id}/cancel`)).status).toBe(200);
  });

  it('refuses a foreign Origin on reads, the event stream and the dashboard; allows a listed one', async () => {
    const [run] = await rt.store.listRuns({ limit: 1 });
    const evil = { origin: 'https://evil.example' };
    for (const path of ['/runs', `/runs/${run?.id}`, `/runs/${run?.id}/events`, '/events', '/dashboard/'])
      expect(await send(server, 'GET', path, evil)).toMatchObject({
        status: 403,
        code: 'ORIGIN_NOT_ALLOWED',
      });
    expect((await send(server, 'GET', '/runs', { origin: 'null' })).status).toBe(403);
    const listed = { origin: 'https://app.example.com' };
    expect((await send(allowing, 'GET', '/runs', listed)).status).toBe(200);
    expect((await send(allowing, 'GET', `/runs/${run?.id}/events`, listed)).type).toMatch(
      /text\/event-stream/,
    );
    expect((await send(allowing, 'GET', '/runs', evil)).status).toBe(403);
  });
});

describe('DNS rebinding', () => {
  it('answers only to the names it is bound to, on every route', async () => {
    const [run] = await rt.store.listRuns({ limit: 1 });
    const rebound = { host: `evil.example:${server.port}` };
    for (const [method, path] of [
      ['GET', '/runs'],
      ['GET', `/runs/${run?.id}/events`],
      ['GET', '/events'],
      ['GET', '/dashboard/'],
      ['GET', '/health'],
      ['POST', `/runs/${run?.id}/cancel`],
    ] as const)
      expect(await send(server, method, path, rebound)).toMatchObject({
        status: 403,
        code: 'HOST_NOT_ALLOWED',
      });
    // A rebinding page is "same origin" with itself: the Host check is what stops it.
    const sameOriginAttack = await send(
      server,
      'POST',
      '/runs',
      { ...rebound, origin: `http://evil.example:${server.port}`, 'content-type': 'application/json' },
      START,
    );
    expect(sameOriginAttack.code).toBe('HOST_NOT_ALLOWED');
    for (const host of [
      `localhost:${server.port}`,
      `127.0.0.1:${server.port}`,
      `[::1]:${server.port}`,
      'LOCALHOST',
    ])
      expect((await send(server, 'GET', '/health', { host })).status).toBe(200);
    expect((await send(allowing, 'GET', '/health', { host: `baton.internal:${allowing.port}` })).status).toBe(
      200,
    );
    expect((await send(allowing, 'GET', '/health', { host: 'evil.example' })).status).toBe(403);
  });

  it('refuses bad allow-lists, naming the entry', async () => {
    const bad = async (options: Parameters<typeof serveHttp>[1]) =>
      serveHttp(rt.baton, options).then(
        async (s) => {
          await s.close();
          return 'started';
        },
        (err: unknown) => (isBatonError(err) ? err.message : String(err)),
      );
    expect(await bad({ allowedOrigins: ['https://app.example.com/path'] })).toMatch(/allowedOrigins\[0\]/);
    expect(await bad({ allowedOrigins: 'https://app.example.com' as never })).toMatch(/allowedOrigins/);
    expect(await bad({ allowedHosts: ['evil.example:80'] })).toMatch(/allowedHosts\[0\]/);
  });
});
