import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { limitBody, requireToken } from './auth-and-limits.ts';
import { readJsonBody } from './read-json-body.ts';
import { errorResponse } from './wire-errors.ts';

const TOKEN = 'correct-horse-battery-staple';

/** The two middlewares on an app with the handler's error mapping, echoing the JSON body. */
function app(limit = 100): Hono {
  const a = new Hono();
  a.use('*', requireToken(TOKEN));
  a.use('*', limitBody(limit));
  a.onError((err) => (err instanceof HTTPException ? err.getResponse() : errorResponse(err)));
  a.post('/echo', async (c) => c.json({ got: (await readJsonBody(c.req.raw)) ?? null }));
  return a;
}

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
      controller.close();
    },
  });
}

async function post(headers: Record<string, string>, body?: RequestInit['body']) {
  const request = new Request('http://baton.test/echo', {
    method: 'POST',
    headers,
    ...(body === undefined ? {} : { body, duplex: 'half' }),
  } as RequestInit);
  const res = await app().fetch(request);
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
    request,
  };
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

describe('requireToken (hono/bearer-auth)', () => {
  it('accepts the token in a Bearer header, any case of the scheme', async () => {
    expect((await post(auth, '{"a":1}')).body).toEqual({ got: { a: 1 } });
    expect((await post({ authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it('answers 401 in the API error shape, saying what is wrong', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'missing Authorization header; send "Authorization: Bearer <token>"'],
      [{ authorization: `Basic ${TOKEN}` }, 'Authorization header must be "Bearer <token>"'],
      [{ authorization: `Bearer ${TOKEN} extra` }, 'Authorization header must be "Bearer <token>"'],
      [{ authorization: 'Bearer nope' }, 'invalid bearer token'],
      [{ authorization: `Bearer ${TOKEN}x` }, 'invalid bearer token'],
    ];
    for (const [headers, message] of cases) {
      const r = await post(headers);
      expect(r.status, message).toBe(401);
      expect(r.body).toEqual({ success: false, error: 'UNAUTHORIZED', message });
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});

describe('limitBody (hono/body-limit)', () => {
  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const r = await post({ ...auth, 'content-length': '101' }, streamOf('x'.repeat(101)));
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      success: false,
      error: 'BODY_TOO_LARGE',
      message: 'request body is 101 bytes; the limit is 100 bytes',
      details: { limitBytes: 100 },
    });
    expect(r.request.bodyUsed).toBe(false);
  });

  it('counts the bytes as they arrive when no length is declared', async () => {
    const over = await post(auth, streamOf('x'.repeat(60), 'y'.repeat(60)));
    expect(over.status).toBe(413);
    expect(over.body.message).toBe('request body is over 100 bytes; the limit is 100 bytes');
    const at = await post(auth, streamOf(`"${'a'.repeat(49)}`, `${'b'.repeat(49)}"`));
    expect(at.body).toEqual({ got: `${'a'.repeat(49)}${'b'.repeat(49)}` });
  });
});
