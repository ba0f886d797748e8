import { createRequire } from 'node:module';
import { JSONPathEnvironment } from 'json-p3';
import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { createJsonPathEnvironment, JsonPathEvaluator } from './jsonpath-query.ts';

const atoms = {
  atoms: [
    { atom_id: 'a1', atom_type: 'claim', confidence: 0.95 },
    { atom_id: 'a2', atom_type: 'evidence', confidence: 0.8 },
    { atom_id: 'a3', atom_type: 'claim', confidence: 0.25 },
  ],
};

describe('json-p3 pin and the leading-zero fix', () => {
  it('runs against json-p3 2.3.1 exactly (the fix reaches into its parser; re-check it on any upgrade)', () => {
    const pkg = createRequire(import.meta.url)('json-p3/package.json') as { version: string };
    expect(pkg.version).toBe('2.3.1');
  });

  it('stock json-p3 2.3.1 still rejects 0.8 (when this fails upstream fixed it: drop the workaround)', () => {
    expect(() => new JSONPathEnvironment().compile('$.atoms[?(@.confidence>0.8)]')).toThrow(
      /invalid number literal/,
    );
  });

  it("evaluates the protocol's own confidence filter", () => {
    const env = createJsonPathEnvironment();
    const ids = env
      .query('$.atoms[?(@.confidence>0.8)]', atoms)
      .values()
      .map((a) => (a as { atom_id: string }).atom_id);
    expect(ids).toEqual(['a1']);
  });

  it("evaluates the protocol's atom_type filter", () => {
    const env = createJsonPathEnvironment();
    expect(env.query("$.atoms[?(@.atom_type=='claim')]", atoms).values()).toEqual([
      atoms.atoms[0],
      atoms.atoms[2],
    ]);
  });

  it.each([
    ['0.25', ['a1', 'a2']],
    ['0', ['a1', 'a2', 'a3']],
    ['-0.5', ['a1', 'a2', 'a3']],
    ['0e0', ['a1', 'a2', 'a3']],
    ['0.9E0', ['a1']],
    ['8e-1', ['a1']],
  ])('accepts the RFC 9535 number literal %s with its value', (literal, expected) => {
    const env = createJsonPathEnvironment();
    const ids = env
      .query(`$.atoms[?@.confidence > ${literal}]`, atoms)
      .values()
      .map((a) => (a as { atom_id: string }).atom_id);
    expect(ids).toEqual(expected);
  });

  it.each(['01', '00', '-01', '-00', '00.5', '.5', '1.', '+1'])(
    'rejects %s, which RFC 9535 does not allow as a number',
    (literal) => {
      expect(() => createJsonPathEnvironment().compile(`$[?@.a == ${literal}]`)).toThrow();
    },
  );

  it('still rejects leading zeros in index and slice selectors', () => {
    const env = createJsonPathEnvironment();
    for (const p of ['$[01]', '$[-01]', '$[01:]', '$[::01]']) expect(() => env.compile(p)).toThrow();
  });

  it('applies the fix to number arguments of function extensions too', () => {
    const env = createJsonPathEnvironment();
    expect(env.query('$.atoms[?length(@.atom_id) == 2]', atoms).values()).toHaveLength(3);
    expect(env.query('$[?value(@.x) == 0.5]', [{ x: 0.5 }, { x: 1 }]).values()).toEqual([{ x: 0.5 }]);
  });
});

describe('JsonPathEvaluator', () => {
  it('reports singular queries so a resolver can unwrap their one value', () => {
    const ev = new JsonPathEvaluator();
    expect(ev.select('$.atoms', atoms)).toEqual({
      values: [atoms.atoms],
      locations: [['atoms']],
      singular: true,
    });
    expect(ev.select('$.atoms[*].atom_id', atoms)).toMatchObject({
      values: ['a1', 'a2', 'a3'],
      singular: false,
    });
    expect(ev.select('$.atoms[*].atom_id', atoms).locations[1]).toEqual(['atoms', 1, 'atom_id']);
  });

  it('turns a syntax error into REF_PATH_INVALID naming the path', () => {
    const ev = new JsonPathEvaluator();
    try {
      ev.select('$.atoms[?(@.confidence>)]', atoms);
      expect.unreachable();
    } catch (err) {
      expect(isBatonError(err, 'REF_PATH_INVALID')).toBe(true);
      expect((err as Error).message).toContain('$.atoms[?(@.confidence>)]');
    }
  });

  it('keeps at most cacheSize compiled queries, dropping the least recently used', () => {
    const ev = new JsonPathEvaluator(2);
    const a = ev.compile('$.a');
    ev.compile('$.b');
    expect(ev.compile('$.a')).toBe(a); // refreshes $.a
    ev.compile('$.c'); // evicts $.b
    expect(ev.compile('$.a')).toBe(a);
    const b2 = ev.compile('$.b');
    expect(ev.compile('$.b')).toBe(b2);
  });
});
