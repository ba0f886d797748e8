/**
 * Values written into a multi-statement message as literals must reach the server exactly as the
 * same values sent as bind parameters: each pair below is read back both ways and compared.
 */
import { expect, it } from 'vitest';
import { literal, renderLiterals } from './batch-conn.ts';
import { describePostgres, withClient } from './fixtures/pg-test-server.ts';
import { PG_TYPES } from './sql.ts';

const CASES: Array<[string, unknown]> = [
  ['text', 'plain'],
  ['text', "it's a 'quote'"],
  ['text', 'back\\slash \\x41 \\n and \\\\ two'],
  ['text', "both ' and \\ and ''"],
  ['text', '$1 is not a parameter inside a value; nor is $$ or --'],
  ['text', 'unicode: ünïcødé — 漢字 🎉'],
  ['text', '{"json":"text","n":[1,2,{"q":"\\"quoted\\""}]}'],
  ['text', ''],
  ['text', null],
  ['bigint', 1_795_792_000_123],
  ['bigint', -42],
  ['integer', 0],
  ['boolean', true],
  ['boolean', false],
  ['text[]', ['a', "b'c", 'd"e', 'f\\g', '', null, 'h,i', '{j}']],
  ['bigint[]', [1, 2, 1_795_792_000_123]],
  ['text[]', []],
  ['bytea', Buffer.from([0, 1, 2, 250, 255, 92, 39])],
];

describePostgres('literals in a multi-statement message', () => {
  it('read back the same as bind parameters, for every kind of value the store sends', async () => {
    await withClient(async (c) => {
      for (const [type, value] of CASES) {
        const bound = await c.query({ text: `SELECT $1::${type} AS v`, values: [value], types: PG_TYPES });
        const inlined = await c.query({
          text: renderLiterals(`SELECT $1::${type} AS v`, [value]),
          types: PG_TYPES,
        });
        expect(inlined.rows[0].v, `${type} ${JSON.stringify(value)}`).toEqual(bound.rows[0].v);
      }
    });
  });

  it('types an untyped literal from its context, as the server types an untyped parameter', async () => {
    await withClient(async (c) => {
      const text = 'SELECT $1 + 1 AS sum, coalesce(NULL::bigint, $2) AS pick, $3 AS plain LIMIT $4';
      const values = [41, 1_795_792_000_123, 'x', 5];
      const bound = await c.query({ text, values, types: PG_TYPES });
      const inlined = await c.query({ text: renderLiterals(text, values), types: PG_TYPES });
      expect(inlined.rows).toEqual(bound.rows);
      expect(inlined.rows).toEqual([{ sum: 42, pick: 1_795_792_000_123, plain: 'x' }]);
    });
  });
});

it('replaces $10 as the tenth value, not $1 followed by a zero, and refuses a missing one', () => {
  const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
  expect(renderLiterals('SELECT $1, $10', values)).toBe("SELECT 'v1', 'v10'");
  expect(() => renderLiterals('SELECT $2', ['only one'])).toThrow(RangeError);
  expect(literal(undefined)).toBe('NULL');
  expect(() => literal(() => 1)).toThrow(TypeError);
});
