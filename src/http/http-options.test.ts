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
      'token must be at least 16 printable ASCII characters without spaces, got "(hidden)"',
    );
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
});
