import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/index.ts';
import { signBody, verifySignature } from './index.ts';

const SECRET = 'whsec_5bd1';
const NOW = Date.UTC(2026, 2, 1, 9, 0, 0, 750);
const BODY = '{"type":"tool_result","result":"明天早上9点"}';

function v1Of(header: string): string[] {
  return header
    .split(',')
    .filter((p) => p.startsWith('v1='))
    .map((p) => p.slice(3));
}

describe('signBody', () => {
  it('writes t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signBody(SECRET, BODY, NOW);
    const t = Math.floor(NOW / 1000);
    const expected = createHmac('sha256', SECRET).update(`${t}.${BODY}`, 'utf8').digest('hex');
    expect(header).toBe(`t=${t},v1=${expected}`);
  });

  it('signs with every secret during a rotation, one v1 entry each', () => {
    const header = signBody(['old', 'new'], BODY, NOW);
    expect(v1Of(header)).toEqual([...v1Of(signBody('old', BODY, NOW)), ...v1Of(signBody('new', BODY, NOW))]);
  });

  it('signs bytes and the same text alike', () => {
    expect(signBody(SECRET, Buffer.from(BODY, 'utf8'), NOW)).toBe(signBody(SECRET, BODY, NOW));
  });

  it.each([
    ['an empty secret', () => signBody('', BODY, NOW), 'secret must be a non-empty string'],
    [
      'an empty rotation',
      () => signBody([], BODY, NOW),
      'secret must be a non-empty string or a non-empty array',
    ],
    ['an empty rotated secret', () => signBody(['a', ''], BODY, NOW), 'secret[1] must be a non-empty string'],
    ['a body object', () => signBody(SECRET, {} as unknown as string, NOW), 'body must be the raw body'],
    ['a NaN time', () => signBody(SECRET, BODY, Number.NaN), 'timestampMs must be a non-negative epoch time'],
  ])('refuses %s, naming the field', (_name, call, message) => {
    expect(call).toThrow(ValidationError);
    expect(call).toThrow(message);
  });
});

describe('verifySignature', () => {
  const header = signBody(SECRET, BODY, NOW);
  const ok = (over: Partial<Parameters<typeof verifySignature>[0]> = {}) =>
    verifySignature({ secret: SECRET, header, body: BODY, nowMs: NOW, ...over });

  it('accepts the header signBody wrote, for the text or its bytes', () => {
    expect(ok()).toEqual({ ok: true });
    expect(ok({ body: Buffer.from(BODY) })).toEqual({ ok: true });
    expect(ok({ body: new TextEncoder().encode(BODY) })).toEqual({ ok: true });
  });

  it('refuses a changed body', () => {
    expect(ok({ body: BODY.replace('9', '8') })).toEqual({ ok: false, reason: 'signature_mismatch' });
    expect(ok({ body: `${BODY} ` })).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('refuses a wrong secret', () => {
    expect(ok({ secret: 'whsec_other' })).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('refuses a timestamp moved without re-signing', () => {
    const moved = header.replace(/^t=(\d+)/, (_m, t: string) => `t=${Number(t) + 1}`);
    expect(ok({ header: moved })).toEqual({ ok: false, reason: 'signature_mismatch' });
  });

  it('refuses a stale timestamp, at the tolerance and not before', () => {
    const signedMs = Math.floor(NOW / 1000) * 1000;
    expect(ok({ nowMs: signedMs + 300_000 })).toEqual({ ok: true });
    expect(ok({ nowMs: signedMs + 300_001 })).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(ok({ nowMs: signedMs + 60_001, toleranceMs: 60_000 })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
  });

  it('refuses a timestamp further ahead than the tolerance', () => {
    const signedMs = Math.floor(NOW / 1000) * 1000;
    expect(ok({ nowMs: signedMs - 300_000 })).toEqual({ ok: true });
    expect(ok({ nowMs: signedMs - 300_001 })).toEqual({ ok: false, reason: 'future_timestamp' });
  });

  it('accepts any v1 entry, so both sides of a rotation work', () => {
    const rotated = signBody(['old', 'new'], BODY, NOW);
    expect(ok({ header: rotated, secret: 'old' })).toEqual({ ok: true });
    expect(ok({ header: rotated, secret: 'new' })).toEqual({ ok: true });
    expect(ok({ header: rotated, secret: 'other' })).toEqual({ ok: false, reason: 'signature_mismatch' });
    // A receiver mid-rotation accepts either secret from a sender that signs with one.
    expect(ok({ header: signBody('new', BODY, NOW), secret: ['old', 'new'] })).toEqual({ ok: true });
  });

  it('skips entries of other schemes and tolerates spaces', () => {
    const t = header.split(',')[0];
    const v1 = header.split(',')[1];
    expect(ok({ header: `${t}, v0=abc, ${v1}` })).toEqual({ ok: true });
  });

  it.each([
    ['no header', undefined, 'missing_header'],
    ['null', null, 'missing_header'],
    ['an empty header', ' ', 'missing_header'],
    ['no v1 entry', 't=1772355600', 'malformed_header'],
    ['no timestamp', `v1=${'a'.repeat(64)}`, 'malformed_header'],
    ['two timestamps', `t=1,t=2,v1=${'a'.repeat(64)}`, 'malformed_header'],
    ['a timestamp with a fraction', `t=1772355600.5,v1=${'a'.repeat(64)}`, 'malformed_header'],
    ['a short v1', 't=1772355600,v1=abc', 'malformed_header'],
    ['an upper-case v1', `t=1772355600,v1=${'A'.repeat(64)}`, 'malformed_header'],
    ['a part without =', `t=1772355600,v1=${'a'.repeat(64)},junk`, 'malformed_header'],
    [
      'a huge header',
      `t=1772355600,${Array(100)
        .fill(`v1=${'a'.repeat(64)}`)
        .join(',')}`,
      'malformed_header',
    ],
  ] as const)('answers %s with %s', (_name, h, reason) => {
    expect(ok({ header: h })).toEqual({ ok: false, reason });
  });

  it.each([
    ['an empty secret', { secret: '' }, 'secret must be a non-empty string'],
    [
      'a negative tolerance',
      { toleranceMs: -1 },
      'toleranceMs must be a non-negative number of milliseconds, got -1',
    ],
    [
      'a missing now',
      { nowMs: undefined as unknown as number },
      'nowMs must be an epoch time in milliseconds',
    ],
    ['a parsed body', { body: JSON.parse(BODY) as string }, 'body must be the raw body as a string or bytes'],
  ])('throws for the receiver’s own mistake: %s', (_name, over, message) => {
    expect(() => ok(over)).toThrow(ValidationError);
    expect(() => ok(over)).toThrow(message);
  });
});
