import { describe, expect, it } from 'vitest';
import { isReservedHeader, parseRetryAfter } from './index.ts';

const NOW = Date.UTC(2026, 2, 1, 9, 0, 0);

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
  });

  it('reads the three HTTP date forms relative to now', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 09:01:30 GMT', NOW)).toBe(90_000);
    expect(parseRetryAfter('Sunday, 01-Mar-26 09:01:30 GMT', NOW)).toBe(90_000);
    expect(parseRetryAfter('Sun Mar  1 09:01:30 2026', NOW)).toBe(90_000);
  });

  it('gives 0 for a date already past', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 08:00:00 GMT', NOW)).toBe(0);
  });

  it.each([null, '', 'soon', '1.5', '-3', '2026-03-01T09:01:30Z'])('ignores %o', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});

describe('isReservedHeader', () => {
  it.each(['Idempotency-Key', 'content-type', 'Baton-Signature', 'baton-anything', 'Host'])(
    'reserves %s',
    (h) => {
      expect(isReservedHeader(h)).toBe(true);
    },
  );

  it.each(['authorization', 'x-baton', 'user-agent'])('leaves %s to the target', (h) => {
    expect(isReservedHeader(h)).toBe(false);
  });
});
