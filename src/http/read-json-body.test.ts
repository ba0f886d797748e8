import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { readJsonBody } from './read-json-body.ts';

const post = (body: RequestInit['body'], headers: Record<string, string> = {}) =>
  new Request('http://baton.test/runs', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

describe('readJsonBody', () => {
  it('parses JSON and gives undefined for an empty or blank body', async () => {
    expect(await readJsonBody(post('{"task":"a","input":[1,2]}'))).toEqual({ task: 'a', input: [1, 2] });
    expect(await readJsonBody(post(null))).toBeUndefined();
    expect(await readJsonBody(post('  \n'))).toBeUndefined();
  });

  it('refuses malformed JSON and bytes that are not UTF-8, naming the body', async () => {
    const bad = await readJsonBody(post('{"task": ')).catch((e: unknown) => e);
    expect(isBatonError(bad, 'INVALID_INPUT')).toBe(true);
    expect((bad as Error).message).toMatch(/^request body is not valid JSON: /);
    expect((bad as { data: object }).data).toEqual({ field: 'body' });
    const latin1 = await readJsonBody(post(new Uint8Array([0x22, 0xe9, 0x22]))).catch((e: unknown) => e);
    expect((latin1 as Error).message).toBe('request body is not UTF-8 text');
  });
});
