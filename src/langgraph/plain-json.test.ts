/**
 * The fast path to JsonPlusSerializer's bytes (plain-json.ts): for plain data it must write exactly
 * what the serializer writes, and leave everything else to it.
 */
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import { isPlainJson, plainJson } from './plain-json.ts';

const serde = new JsonPlusSerializer();
const bytes = async (v: unknown) => Buffer.from((await serde.dumpsTyped(v))[1]);

const PLAIN: unknown[] = [
  'text with "quotes", \\, \n, \u0000, é, 漢字, 🎉 and a lone \udc00',
  0,
  -0,
  3.25,
  Number.NaN,
  Number.NEGATIVE_INFINITY,
  true,
  null,
  [],
  {},
  [1, 'two', [3, [4, { five: null }]]],
  { v: 4, id: 'x', versions_seen: { n0: { 'branch:to:n0': 2 } }, channel_values: {} },
  Object.assign(Object.create(null), { a: 1 }),
  { source: 'loop', step: 3, parents: {} },
];

class Point {
  constructor(readonly x: number) {}
}
const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;
let deep: unknown = 'leaf';
for (let i = 0; i < 150; i++) deep = [deep];

const NOT_PLAIN: unknown[] = [
  undefined,
  { a: undefined },
  [1, undefined],
  // biome-ignore lint/suspicious/noSparseArray: a hole is what this checks
  [1, , 3],
  new Date(0),
  new Map([['a', 1]]),
  new Set([1]),
  new Uint8Array([1, 2]),
  /re/g,
  new Error('boom'),
  new Point(1),
  { lg_name: 'Send', node: 'n', args: { a: 1 } },
  { toJSON: () => 'x' },
  { nested: { when: new Date(0) } },
  deep,
  cycle,
  10n,
];

describe('plain JSON fast path', () => {
  it('tells plain data from what the serializer treats specially', () => {
    for (const v of PLAIN) expect(isPlainJson(v), JSON.stringify(v)).toBe(true);
    for (const v of NOT_PLAIN) expect(isPlainJson(v)).toBe(false);
  });

  it('writes plain data synchronously, byte for byte what JsonPlusSerializer writes', async () => {
    const dump = await plainJson(serde);
    for (const v of PLAIN) {
      const out = dump(v);
      expect(out).not.toBeInstanceOf(Promise);
      const [type, b] = out as [string, Uint8Array];
      expect(type).toBe('json');
      expect(Buffer.from(b).equals(await bytes(v)), JSON.stringify(v)).toBe(true);
      expect(await serde.loadsTyped(type, b)).toEqual(await serde.loadsTyped('json', await bytes(v)));
    }
  });

  it('hands everything else to the serializer', async () => {
    const dump = await plainJson(serde);
    for (const v of NOT_PLAIN) {
      const out = dump(v);
      expect(out).toBeInstanceOf(Promise);
      const [type, b] = await out;
      const [wantType, want] = await serde.dumpsTyped(v);
      expect(type).toBe(wantType);
      expect(Buffer.from(b).equals(Buffer.from(want))).toBe(true);
    }
  });

  it('is not used for another serializer, a subclass, or one that writes plain data differently', async () => {
    class Loud extends JsonPlusSerializer {}
    const loud = new Loud();
    expect((await plainJson(loud))({ a: 1 })).toBeInstanceOf(Promise);
    const custom = {
      dumpsTyped: async (v: unknown) =>
        ['json', Buffer.from(`${JSON.stringify(v)} `)] as [string, Uint8Array],
      loadsTyped: async (_t: string, b: Uint8Array) => JSON.parse(Buffer.from(b).toString()),
    };
    expect((await plainJson(custom))({ a: 1 })).toBeInstanceOf(Promise);
    // The same class writing the probe otherwise (as a future version might): the check refuses it.
    const changed = new JsonPlusSerializer();
    changed.dumpsTyped = async (v: unknown) => ['json', Buffer.from(JSON.stringify(v, null, 1))];
    expect((await plainJson(changed))({ a: 1 })).toBeInstanceOf(Promise);
  });
});
