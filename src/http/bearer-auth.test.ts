import { describe, expect, it } from 'vitest';
import { constantTimeEqual, requireBearer } from './bearer-auth.ts';

const TOKEN = 'correct-horse-battery-staple';
const withAuth = (value?: string) =>
  new Request('http://baton.test/runs', value === undefined ? {} : { headers: { authorization: value } });

describe('constantTimeEqual', () => {
  it('is true only for the same string', () => {
    expect(constantTimeEqual(TOKEN, TOKEN)).toBe(true);
    expect(constantTimeEqual(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(constantTimeEqual(TOKEN.slice(0, -1), TOKEN)).toBe(false);
    expect(constantTimeEqual('', TOKEN)).toBe(false);
    expect(constantTimeEqual(TOKEN.replace('h', 'H'), TOKEN)).toBe(false);
    expect(constantTimeEqual('ü', 'ü')).toBe(true);
  });
});

describe('requireBearer', () => {
  it('accepts the token in a Bearer header (any case of the scheme)', () => {
    expect(() => requireBearer(withAuth(`Bearer ${TOKEN}`), TOKEN)).not.toThrow();
    expect(() => requireBearer(withAuth(`bearer ${TOKEN}`), TOKEN)).not.toThrow();
  });

  it('answers 401 with a message saying what is wrong', () => {
    expect(() => requireBearer(withAuth(), TOKEN)).toThrow(/missing Authorization header/);
    expect(() => requireBearer(withAuth(`Basic ${TOKEN}`), TOKEN)).toThrow(/must be "Bearer <token>"/);
    expect(() => requireBearer(withAuth(`Bearer ${TOKEN} extra`), TOKEN)).toThrow(/must be "Bearer <token>"/);
    expect(() => requireBearer(withAuth('Bearer nope'), TOKEN)).toThrow('invalid bearer token');
    try {
      requireBearer(withAuth('Bearer nope'), TOKEN);
    } catch (err) {
      expect(err).toMatchObject({ status: 401, wireCode: 'UNAUTHORIZED' });
    }
  });
});
