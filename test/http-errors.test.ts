/**
 * Bad requests over real HTTP get the one error shape with the right status: 400 naming the field
 * (bad JSON, bad fields, unknown task, input refused by the task's schema), 404 for unknown ids and
 * routes, 413 over the body limit (by Content-Length and by the bytes actually sent), 401 without
 * the bearer token — and none of them stores anything.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { defineTask } from '../src/runtime/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';

const TOKEN = 'test-token-0123456789abcdef';
let rt: TestRuntime;
let open: HttpServer;
let guarded: HttpServer;

beforeAll(async () => {
  rt = testRuntime();
  rt.baton.register(
    defineTask({ name: 'double', input: z.object({ n: z.number() }), run: async ({ n }) => n * 2 }),
  );
  open = await serveHttp(rt.baton, { bodyLimitBytes: 1024 });
  guarded = await serveHttp(rt.baton, { token: TOKEN });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
  await rt.dispose();
});

async function call(
  path: string,
  init: RequestInit & { base?: string } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const r = await fetch(`${init.base ?? open.url}${path}`, init);
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
}

const postJson = (path: string, body: unknown) =>
  call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('400: the request is wrong, and the answer says where', () => {
  it('refuses a body that is not JSON', async () => {
    const r = await call('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"task": "double", ',
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: 'INVALID_INPUT', details: { field: 'body' } });
    expect(r.body.message).toMatch(/^request body is not valid JSON: /);
  });

  it('names a field of the wrong type, and an unknown field', async () => {
    const typed = await postJson('/runs', { task: 3 });
    expect(typed.status).toBe(400);
    expect(typed.body).toMatchObject({ error: 'INVALID_INPUT', details: { field: 'body.task' } });
    expect(typed.body.message).toMatch(/^body\.task: .*expected string/);
    const typo = await postJson('/runs', { taks: 'double' });
    expect(typo.body).toMatchObject({ error: 'INVALID_INPUT', details: { field: 'body.taks' } });
    const mode = await postJson('/runs', { task: 'double', mode: 'later' });
    expect(mode.body.message).toMatch(/body\.mode: .*"sync"\|"async"/);
  });

  it('wants exactly one of task, flow or resumeJobId', async () => {
    expect((await postJson('/runs', { input: {} })).body).toMatchObject({
      error: 'INVALID_INPUT',
      message: 'body must give exactly one of task, flow or resumeJobId',
    });
    expect((await postJson('/runs', { resumeJobId: 'run_x', task: 'double' })).body).toMatchObject({
      details: { field: 'body.task' },
    });
  });

  it('answers TASK_NOT_FOUND for an unknown task, and INVALID_INPUT for an input the task refuses', async () => {
    const unknown = await postJson('/runs', { task: 'triple', input: { n: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'TASK_NOT_FOUND' });
    expect(unknown.body.message).toMatch(/unknown task "triple" \(registered: double\)/);
    const refused = await postJson('/runs', { task: 'double', input: { n: 'two' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'INVALID_INPUT' });
    expect(refused.body.message).toMatch(/input\.n: .*expected number/);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('refuses a bad query parameter and a bad Last-Event-ID', async () => {
    expect((await call('/runs?limit=0')).body).toMatchObject({
      error: 'INVALID_INPUT',
      details: { field: 'query.limit' },
    });
    expect((await call('/runs?status=sleeping')).body).toMatchObject({ details: { field: 'query.status' } });
    const run = await postJson('/runs', { task: 'double', input: { n: 1 } });
    const id = (run.body.metadata as { jobId: string }).jobId;
    const bad = await call(`/runs/${id}/events`, { headers: { 'last-event-id': 'yesterday' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ details: { field: 'header.Last-Event-ID' } });
  });
});

describe('400, never 500: budgets out of range and values nested too deep', () => {
  it('refuses budgets that are fractional, huge or unreadable, naming the field, and stores nothing', async () => {
    const before = await rt.store.countRuns();
    for (const budget of [1.5, 1e20, '99999999999999999999h', -1]) {
      const r = await postJson('/runs', { task: 'double', input: { n: 1 }, budget });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({
        success: false,
        error: expect.stringMatching(/^INVALID_(INPUT|OPTION)$/),
      });
      expect(r.body.message).toMatch(/budget/);
    }
    expect(await rt.store.countRuns()).toEqual(before);
  });

  it('refuses a body nested 5,000 deep, on every JSON route', async () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    for (const path of ['/runs', '/runs/run_X/decisions']) {
      // The server with the default body limit (the other one allows 1 KB).
      const r = await call(path, {
        base: guarded.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: deep,
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'INVALID_INPUT', details: { field: 'body' } });
      expect(r.body.message).toMatch(/^body must be nested at most 512 levels deep/);
    }
  });
});

describe('404: unknown ids and routes', () => {
  it.each([
    ['GET', '/runs/run_nope'],
    ['GET', '/runs/run_nope/events'],
    ['POST', '/runs/run_nope/resume'],
    ['POST', '/runs/run_nope/cancel'],
  ])('%s %s → RUN_NOT_FOUND', async (method, path) => {
    const r = await call(path, { method });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({
      success: false,
      error: 'RUN_NOT_FOUND',
      message: 'no run with id run_nope',
    });
  });

  it('resuming an unknown job id in the protocol form is a 404 too', async () => {
    expect((await postJson('/runs', { resumeJobId: 'run_nope' })).status).toBe(404);
    expect((await postJson('/runs/run_nope/decisions', 'skip')).status).toBe(404);
  });

  it('an unknown route is ROUTE_NOT_FOUND', async () => {
    const r = await call('/jobs');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: 'ROUTE_NOT_FOUND', message: 'no route GET /jobs' });
  });
});

describe('413: bodies over the limit', () => {
  it('refuses by Content-Length before reading', async () => {
    const r = await postJson('/runs', { task: 'double', input: { pad: 'x'.repeat(2000) } });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ error: 'BODY_TOO_LARGE', details: { limitBytes: 1024 } });
  });

  it('refuses by the bytes actually sent when there is no Content-Length (chunked)', async () => {
    const { port } = new URL(open.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/runs',
          method: 'POST',
          headers: { 'transfer-encoding': 'chunked', 'content-type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => {
            body += String(d);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write(`{"task":"double","input":{"pad":"`);
      for (let i = 0; i < 8; i++) req.write('y'.repeat(300));
      req.end('"}}');
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'BODY_TOO_LARGE' });
  });
});

describe('401: a token guards every route but /health', () => {
  it('refuses a request without the token, and one with a wrong token', async () => {
    const none = await call('/runs', { base: guarded.url });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ success: false, error: 'UNAUTHORIZED' });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await call('/runs', { base: guarded.url, headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('invalid bearer token');
    const basic = await call('/metrics', { base: guarded.url, headers: { authorization: 'Basic abc' } });
    expect(basic.status).toBe(401);
    const start = await call('/runs', {
      base: guarded.url,
      method: 'POST',
      body: '{"task":"double","input":{"n":1}}',
    });
    expect(start.status).toBe(401);
  });

  it('lets the right token in, and /health in without one', async () => {
    const ok = await call('/runs', { base: guarded.url, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    const health = await call('/health', { base: guarded.url });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, store: { dialect: 'sqlite', ok: true } });
  });
});
