import { describe, expect, it } from 'vitest';
import { resolveHttpOptions } from './http-options.ts';

describe('resolveHttpOptions', () => {
  it('fills in the defaults', () => {
    expect(resolveHttpOptions()).toMatchObject({
      token: undefined,
      bodyLimitBytes: 1_048_576,
      maxSyncWaitMs: 300_000,
      syncGraceMs: 1_000,
      heartbeatMs: 15_000,
      basePath: '',
      actor: 'http',
      invocationTimeoutMs: undefined,
    });
  });

  it('names the field of a bad option, without echoing a token', () => {
    expect(() => resolveHttpOptions({ token: 'short' })).toThrow(
      'token must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then = padding), the bearer token syntax of RFC 6750, got "(hidden)"',
    );
    // A token hono/bearer-auth would never accept in a header is refused when configured.
    expect(() => resolveHttpOptions({ token: 'sixteen-chars-but-has!' })).toThrow(/^token must be/);
    expect(resolveHttpOptions({ token: 'abcDEF0123456789+/==' }).token).toBe('abcDEF0123456789+/==');
    expect(() => resolveHttpOptions({ bodyLimitBytes: 0 })).toThrow(
      'bodyLimitBytes must be a positive integer, got 0',
    );
    expect(() => resolveHttpOptions({ maxSyncWaitMs: 1.5 })).toThrow(
      /^maxSyncWaitMs must be a positive integer/,
    );
    expect(() => resolveHttpOptions({ basePath: 'api/' })).toThrow(/^basePath must be a path like "\/api"/);
    expect(() => resolveHttpOptions({ syncGraceMs: -1 })).toThrow(/^syncGraceMs must be an integer ≥ 0/);
    expect(() => resolveHttpOptions({ flows: [{} as never] })).toThrow(
      /^flows\[0\] must be a flow from defineFlow/,
    );
  });

  it('refuses an unknown key by name with the nearest option (issue 11 item 6)', () => {
    expect(() => resolveHttpOptions({ tokn: 'x'.repeat(20) } as never)).toThrow(
      /^HTTP options\.tokn is not an option \(did you mean "token"\?\)/,
    );
    expect(() => resolveHttpOptions({ allowedOrigin: ['https://a.example'] } as never)).toThrow(
      /allowedOrigin is not an option \(did you mean "allowedOrigins"\?\)/,
    );
    const err = (() => {
      try {
        resolveHttpOptions({ zzz: 1 } as never);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toMatchObject({ code: 'INVALID_OPTION', data: { field: 'HTTP options.zzz' } });
    expect((err as Error).message).not.toContain('did you mean');
  });
});
