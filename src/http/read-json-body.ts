/**
 * Reads a JSON request body under a byte limit. Content-Length is checked first (refused without
 * reading), and the bytes actually read are counted too, because the header may be absent
 * (chunked) or lie. Anything that is not UTF-8 JSON is a 400 naming the position.
 */
import { assertJsonDepth, BatonError } from '../core/index.ts';
import { HttpCodes, HttpProblem } from './wire-errors.ts';

function tooLarge(limit: number, bytes: number | string): HttpProblem {
  return new HttpProblem(
    413,
    HttpCodes.bodyTooLarge,
    `request body is ${typeof bytes === 'number' ? `over ${limit}` : bytes} bytes; the limit is ${limit} bytes`,
    { limitBytes: limit },
  );
}

/** The body's bytes, refusing more than `limit`. An absent body gives an empty array. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit)
    throw tooLarge(limit, declared);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit, total);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** The parsed JSON body, or `undefined` when the body is empty. */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const bytes = await readBodyBytes(request, limit);
  if (bytes.byteLength === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', 'request body is not UTF-8 text', {
      cause: err,
      data: { field: 'body' },
    });
  }
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `request body is not valid JSON: ${(err as Error).message}`, {
      cause: err,
      data: { field: 'body' },
    });
  }
  assertJsonDepth(body, 'body');
  return body;
}
