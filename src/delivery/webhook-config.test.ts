import { describe, expect, it } from 'vitest';
import { isBatonError, ValidationError } from '../core/index.ts';
import { parseWebhookTarget, webhookRetryDelay } from './index.ts';

const URL_ = 'https://hooks.example.com/baton';

describe('parseWebhookTarget', () => {
  it('fills in the defaults', () => {
    expect(parseWebhookTarget({ url: URL_ })).toEqual({
      url: URL_,
      timeoutMs: 10_000,
      retry: { baseMs: 1_000, factor: 2, maxMs: 300_000, maxAttempts: 8 },
      headers: {},
      allowPrivateNetwork: false,
    });
  });

  it('reads durations as ms or strings, and keeps secrets and headers', () => {
    const target = parseWebhookTarget({
      url: 'http://127.0.0.1:8080/hook',
      allowPrivateNetwork: true,
      secret: ['old', 'new'],
      timeout: '2.5s',
      retry: { base: 500, factor: 3, max: '1m', maxAttempts: 4 },
      headers: { Authorization: 'Bearer t' },
    });
    expect(target).toEqual({
      url: 'http://127.0.0.1:8080/hook',
      secret: ['old', 'new'],
      timeoutMs: 2_500,
      retry: { baseMs: 500, factor: 3, maxMs: 60_000, maxAttempts: 4 },
      headers: { Authorization: 'Bearer t' },
      allowPrivateNetwork: true,
    });
  });

  it('gives a retry section webhookRetryDelay takes as it is', () => {
    const { retry } = parseWebhookTarget({ url: URL_, retry: { base: '2s', max: '5s', maxAttempts: 4 } });
    expect([1, 2, 3, 4].map((a) => webhookRetryDelay(a, retry))).toEqual([2_000, 4_000, 5_000, undefined]);
  });

  it.each([
    ['not an object', 'https://x', 'hooks.a must be an object with a url, got "https://x"'],
    ['no url', {}, 'hooks.a.url must be an absolute http: or https: URL'],
    ['a ws url', { url: 'ws://x/y' }, 'hooks.a.url must be an absolute http: or https: URL, got "ws://x/y"'],
    [
      'a url with credentials',
      { url: 'https://me:pw@x/' },
      'hooks.a.url must be a URL without user:password',
    ],
    ['an empty secret', { url: URL_, secret: '' }, 'hooks.a.secret must be a non-empty string'],
    [
      'a numeric secret',
      { url: URL_, secret: 42 },
      'hooks.a.secret must be a non-empty string or an array of them, got 42',
    ],
    [
      'a bad timeout',
      { url: URL_, timeout: 'soon' },
      'hooks.a.timeout must be a whole number of milliseconds',
    ],
    ['a zero timeout', { url: URL_, timeout: 0 }, 'hooks.a.timeout must be a positive duration, got 0'],
    [
      'a boolean timeout',
      { url: URL_, timeout: true },
      'hooks.a.timeout must be milliseconds or a string like "10s", got true',
    ],
    [
      'a bad base',
      { url: URL_, retry: { base: '-1s' } },
      'hooks.a.retry.base must be a whole number of milliseconds',
    ],
    [
      'max below base',
      { url: URL_, retry: { base: '10s', max: '5s' } },
      'hooks.a.retry.max must be at least retry.base (10000 ms), got "5s"',
    ],
    [
      'a small factor',
      { url: URL_, retry: { factor: 0 } },
      'hooks.a.retry.factor must be a number ≥ 1, got 0',
    ],
    [
      'a fractional maxAttempts',
      { url: URL_, retry: { maxAttempts: 1.5 } },
      'hooks.a.retry.maxAttempts must be an integer ≥ 1, got 1.5',
    ],
    [
      'an unknown retry option',
      { url: URL_, retry: { jitter: true } },
      'hooks.a.retry.jitter must be absent (not a webhook option)',
    ],
    ['a typo', { url: URL_, secert: 's' }, 'hooks.a.secert must be absent (not a webhook option)'],
    [
      'an idempotency header',
      { url: URL_, headers: { 'Idempotency-Key': 'x' } },
      'hooks.a.headers.Idempotency-Key must be absent',
    ],
    [
      'a baton header',
      { url: URL_, headers: { 'baton-delivery-id': 'x' } },
      'hooks.a.headers.baton-delivery-id must be absent',
    ],
    [
      'a content-type header',
      { url: URL_, headers: { 'Content-Type': 'text/plain' } },
      'hooks.a.headers.Content-Type must be absent',
    ],
    [
      'a header value with a newline',
      { url: URL_, headers: { 'X-A': 'a\r\nX-B: b' } },
      'hooks.a.headers.X-A must be a string without CR, LF or NUL',
    ],
    [
      'a non-string header',
      { url: URL_, headers: { 'X-A': 1 } },
      'hooks.a.headers.X-A must be a string, got 1',
    ],
    [
      'a bad header name',
      { url: URL_, headers: { 'X A': 'a' } },
      'hooks.a.headers.X A must be a header name',
    ],
    [
      'a header given twice',
      { url: URL_, headers: { 'X-A': 'a', 'x-a': 'b' } },
      'hooks.a.headers.x-a must be given once',
    ],
  ])('refuses %s, naming the field (INVALID_OPTION)', (_name, value, message) => {
    let caught: unknown;
    try {
      parseWebhookTarget(value, 'hooks.a');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as Error).message.startsWith(message)).toBe(true);
    expect(isBatonError(caught, 'INVALID_OPTION')).toBe(true);
  });

  it('names the field "webhook" by default', () => {
    expect(() => parseWebhookTarget({ url: 'nope' })).toThrow('webhook.url must be');
  });
});

describe('webhook addresses (issue 11 item 8)', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://api.localhost/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.1.2.3/',
    'http://172.20.0.1/',
    'http://192.168.1.10/',
    'http://[::1]:9000/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
  ])('refuses %s unless private networks are allowed', (url) => {
    const err = (() => {
      try {
        parseWebhookTarget({ url }, 'hooks.a');
      } catch (e) {
        return e;
      }
    })();
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toMatch(
      /^hooks\.a\.url must be a URL on a public address .*allowPrivateNetwork/,
    );
    expect(parseWebhookTarget({ url, allowPrivateNetwork: true }).url).toBe(url);
  });

  it('accepts public addresses and names', () => {
    for (const url of ['https://hooks.example.com/x', 'http://8.8.8.8/', 'http://[2001:4860::8888]/'])
      expect(parseWebhookTarget({ url }).allowPrivateNetwork).toBe(false);
  });
});
