import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { readBodyBytes, readJsonBody } from './read-json-body.ts';
import { HttpProblem } from './wire-errors.ts';

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(new TextEncoder().encode(c));
      controller.close();
    },
  });
}

const post = (body: RequestInit['body'], headers: Record<string, string> = {}) =>
  new Request('http://baton.test/runs', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

async function problemOf(p: Promise<unknown>): Promise<HttpProblem> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HttpProblem)) throw new Error(`expected an HttpProblem, got ${String(err)}`);
  return err;
}

describe('readJsonBody', () => {
  it('parses JSON and gives undefined for an empty or blank body', async () => {
    expect(await readJsonBody(post('{"task":"a","input":[1,2]}'), 100)).toEqual({ task: 'a', input: [1, 2] });
    expect(await readJsonBody(post(null), 100)).toBeUndefined();
    expect(await readJsonBody(post('  \n'), 100)).toBeUndefined();
  });

  it('refuses a declared Content-Length over the limit without reading the body', async () => {
    const request = post(streamOf('x'.repeat(101)), { 'content-length': '101' });
    const err = await problemOf(readBodyBytes(request, 100));
    expect(err).toMatchObject({
      status: 413,
      wireCode: 'BODY_TOO_LARGE',
      message: 'request body is 101 bytes; the limit is 100 bytes',
    });
    expect(request.bodyUsed).toBe(false);
  });

  it('counts the bytes actually read when the header is absent or lies', async () => {
    const chunked = await problemOf(readBodyBytes(post(streamOf('x'.repeat(60), 'y'.repeat(60))), 100));
    expect(chunked).toMatchObject({
      status: 413,
      message: 'request body is over 100 bytes; the limit is 100 bytes',
    });
    const lying = await problemOf(readBodyBytes(post('z'.repeat(150), { 'content-length': '10' }), 100));
    expect(lying.status).toBe(413);
    expect((await readBodyBytes(post(streamOf('a'.repeat(50), 'b'.repeat(50))), 100)).byteLength).toBe(100);
  });

  it('refuses malformed JSON and bytes that are not UTF-8, naming the body', async () => {
    const bad = await readJsonBody(post('{"task": '), 100).catch((e: unknown) => e);
    expect(isBatonError(bad, 'INVALID_INPUT')).toBe(true);
    expect((bad as Error).message).toMatch(/^request body is not valid JSON: /);
    expect((bad as { data: object }).data).toEqual({ field: 'body' });
    const latin1 = await readJsonBody(post(new Uint8Array([0x22, 0xe9, 0x22])), 100).catch((e: unknown) => e);
    expect((latin1 as Error).message).toBe('request body is not UTF-8 text');
  });
});
