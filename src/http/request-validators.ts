/**
 * Request bodies and queries checked on Hono's validator (`hono/validator`, issue 15 item 6): each
 * route declares what it takes (`jsonBody(StartBody)`, `query(ListQuery)`), the check runs before
 * the handler, and the handler reads the checked value, typed by the schema, with
 * `c.req.valid('json' | 'query')`. A failure is the API's typed 400 (INVALID_INPUT naming the
 * field, from `parseRequest`), never one of Hono's plain-text answers:
 *
 * - Hono's JSON target parses the body itself and answers a malformed or an empty one with a plain
 *   400 "Malformed JSON in request body". The API names the problem (`request body is not valid
 *   JSON: <position>`, not UTF-8, nested too deep) and takes some posts without a body (cancel,
 *   resume, a signal: `curl -X POST …/cancel`). So `readJsonText` reads the body first, with those
 *   errors, and Hono's validator reads its text again from a copy of the request (an empty body
 *   given as the route's `ifEmpty`), declared JSON: a body of any other type was refused with 415
 *   before (`jsonBodiesOnly`), and Hono reads a body only when the request declares JSON. Parsing
 *   twice costs microseconds for the API's bodies, and is bounded by the body limit.
 * - Hono's query target gives a repeated name as an array; the API keeps the last value.
 */
import type { MiddlewareHandler } from 'hono';
import { validator } from 'hono/validator';
import type { z } from 'zod';
import { readJsonText } from './read-json-body.ts';
import { parseRequest } from './request-schemas.ts';

type Checked<In, Out, Target extends 'json' | 'query'> = MiddlewareHandler<
  // biome-ignore lint/suspicious/noExplicitAny: Hono's own validator middleware takes any Env.
  any,
  string,
  { in: { [K in Target]: In }; out: { [K in Target]: Out } }
>;

/** The body checked against a zod schema (its issues named `body.<path>`); an empty body is `ifEmpty`. */
export function jsonBody<S extends z.ZodType>(
  schema: S,
  ifEmpty?: z.input<S> | null,
): Checked<z.input<S>, z.output<S>, 'json'>;
/** The body checked by `check`, which throws the route's own INVALID_INPUT. */
export function jsonBody<T>(check: (body: unknown) => T, ifEmpty?: unknown): Checked<unknown, T, 'json'>;
export function jsonBody(check: z.ZodType | ((body: unknown) => unknown), ifEmpty: unknown = null) {
  const checked = validator('json', (body: unknown) =>
    typeof check === 'function' ? check(body) : parseRequest(check, body, 'body'),
  );
  const empty = JSON.stringify(ifEmpty);
  const middleware: MiddlewareHandler = async (c, next) => {
    const raw = c.req.raw;
    const text = (await readJsonText(raw))?.text ?? empty;
    const headers = new Headers(raw.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    headers.delete('transfer-encoding');
    c.req.raw = new Request(raw.url, { method: raw.method, headers, body: text, signal: raw.signal });
    return checked(c, next);
  };
  return middleware;
}

/** The query parameters checked against a zod schema (issues named `query.<name>`). */
export function query<S extends z.ZodType>(schema: S): Checked<z.input<S>, z.output<S>, 'query'> {
  return validator('query', (params: Record<string, string | string[]>) =>
    parseRequest(
      schema,
      Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.at(-1) : v])),
      'query',
    ),
  ) as Checked<z.input<S>, z.output<S>, 'query'>;
}
