import { Hono } from 'hono';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { jsonBody, query } from './request-validators.ts';
import { errorResponse } from './wire-errors.ts';

const Body = z.strictObject({ name: z.string().min(1), count: z.number().int().optional() });
const Query = z.strictObject({ limit: z.string().regex(/^\d+$/).optional() });

const app = new Hono();
app.onError((err) => errorResponse(err));
app.post('/things', jsonBody(Body), (c) => {
  const body = c.req.valid('json');
  expectTypeOf(body).toEqualTypeOf<{ name: string; count?: number | undefined }>();
  return c.json({ got: body });
});
app.post('/things/:id/stop', jsonBody(z.strictObject({ reason: z.string().optional() }), {}), (c) =>
  c.json({ got: c.req.valid('json') }),
);
app.get('/things', query(Query), (c) => c.json({ got: c.req.valid('query') }));

async function call(path: string, init: RequestInit = {}) {
  const r = await app.request(path, init);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}
const post = (path: string, body: string, type = 'application/json') =>
  call(path, { method: 'POST', headers: { 'content-type': type }, body });

describe("request bodies and queries on Hono's validator", () => {
  it('hands the route the checked body, typed by its schema', async () => {
    expect(await post('/things', '{"name":"a","count":2}')).toEqual({
      status: 200,
      body: { got: { name: 'a', count: 2 } },
    });
  });

  it("answers a malformed body with the API's typed 400 naming the position, not Hono's plain text", async () => {
    const r = await post('/things', '{"name": ');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, error: 'INVALID_INPUT', details: { field: 'body' } });
    expect(r.body.message).toMatch(/^request body is not valid JSON: /);
  });

  it('names the field that fails the schema, and an unknown field', async () => {
    const r = await post('/things', '{"name":""}');
    expect(r.body).toMatchObject({ error: 'INVALID_INPUT', details: { field: 'body.name' } });
    expect((await post('/things', '{"name":"a","nmae":1}')).body).toMatchObject({
      details: { field: 'body.nmae' },
    });
  });

  it("gives an empty post the route's value for it, with or without a content type", async () => {
    expect(await call('/things/1/stop', { method: 'POST' })).toEqual({ status: 200, body: { got: {} } });
    expect(await post('/things/1/stop', '  ')).toEqual({ status: 200, body: { got: {} } });
    // Without a value for it, an empty body is null: the schema names what it wanted.
    const r = await call('/things', { method: 'POST' });
    expect(r.body).toMatchObject({ error: 'INVALID_INPUT', details: { field: 'body' } });
  });

  it('checks the query, keeping the last value of a repeated name', async () => {
    expect(await call('/things?limit=1&limit=20')).toEqual({ status: 200, body: { got: { limit: '20' } } });
    expect((await call('/things?limit=x')).body).toMatchObject({ details: { field: 'query.limit' } });
  });
});
