/**
 * Reads a JSON request body. Its size was checked before the route by `hono/body-limit`
 * (auth-and-limits.ts). Anything that is not UTF-8 JSON is a 400 naming the position.
 */
import { assertJsonDepth, BatonError } from '../core/index.ts';

/** The parsed JSON body, or `undefined` when the body is empty. */
export async function readJsonBody(request: Request): Promise<unknown> {
  return (await readJsonText(request))?.value;
}

/** The body's text and its parsed value, or `undefined` when the body is empty or blank. */
export async function readJsonText(request: Request): Promise<{ text: string; value: unknown } | undefined> {
  const bytes = new Uint8Array(await request.arrayBuffer());
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BatonError('INVALID_INPUT', `request body is not valid JSON: ${(err as Error).message}`, {
      cause: err,
      data: { field: 'body' },
    });
  }
  assertJsonDepth(value, 'body');
  return { text, value };
}
