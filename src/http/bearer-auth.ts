/**
 * Bearer-token check. The comparison takes the same time whatever the mismatch position (and
 * whatever the length of the guess), so the token cannot be found byte by byte from timings.
 * Plain Web APIs only, so the handler runs on edge runtimes too.
 */
import { HttpCodes, HttpProblem } from './wire-errors.ts';

const encoder = new TextEncoder();

/** Constant-time equality of two strings (time depends only on the expected string's length). */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = encoder.encode(given);
  const b = encoder.encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i % Math.max(1, a.length)] ?? 0) ^ (b[i] as number);
  return diff === 0;
}

/** Throws 401 unless the request carries `Authorization: Bearer <token>`. */
export function requireBearer(request: Request, token: string): void {
  const header = request.headers.get('authorization') ?? '';
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!match) {
    throw new HttpProblem(
      401,
      HttpCodes.unauthorized,
      header === ''
        ? 'missing Authorization header; send "Authorization: Bearer <token>"'
        : 'Authorization header must be "Bearer <token>"',
    );
  }
  if (!constantTimeEqual(match[1] as string, token))
    throw new HttpProblem(401, HttpCodes.unauthorized, 'invalid bearer token');
}
