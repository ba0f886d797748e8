/**
 * Property: any value a user can put into a run (inputs, names, outputs: arbitrary text, JSON,
 * arrays of text) written into a multi-statement message as a literal reads back exactly as the
 * same value sent as a bind parameter, whatever `standard_conforming_strings` says, and can never
 * end its statement early — so a quote, a backslash, `$n` or `--` in a value is data, never SQL.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { renderLiterals } from './batch-conn.ts';
import { describePostgres, withClient } from './fixtures/pg-test-server.ts';
import { PG_TYPES } from './sql.ts';

// Text as Postgres stores it: any Unicode but NUL (which a text value cannot hold at all), with the
// characters that matter to quoting drawn far more often than chance would.
const nasty = fc.constantFrom(
  "'",
  '\\',
  '"',
  '$',
  '$1',
  '$$',
  '$b$',
  '$b',
  '--',
  ';',
  '/*',
  '*/',
  '{',
  '}',
  ',',
  'E',
  ' ',
  '\n',
);
const text = fc
  .array(fc.oneof(nasty, fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), { maxLength: 12 })
  .map((parts) => parts.join('').replaceAll('\u0000', ''));

describePostgres('literals in a multi-statement message, fuzzed', () => {
  for (const conforming of ['on', 'off'] as const) {
    it(`read back as bind parameters do, with standard_conforming_strings ${conforming}`, async () => {
      await withClient(async (c) => {
        await c.query(`SET standard_conforming_strings = ${conforming}`);
        // escape_string_warning would print a notice for every E'' literal under 'off'.
        await c.query('SET escape_string_warning = off');
        await fc.assert(
          fc.asyncProperty(
            text,
            // Items often repeat the one before (a merged statement's column): written once, reused.
            fc
              .array(fc.tuple(fc.option(text, { nil: null }), fc.boolean()), { maxLength: 5 })
              .map((items) => items.flatMap(([item, twice]) => (twice ? [item, item] : [item]))),
            async (s, list) => {
              const sql = 'SELECT $1::text AS s, $2::text[] AS list, $1::text = $1::text AS same';
              const values = [s, list];
              const bound = await c.query({ text: sql, values, types: PG_TYPES });
              // Two statements in one message: a value that closed its quote would break the first or
              // run SQL of its own; the second proves the message was read to its end as written.
              const inlined = await c.query({
                text: `${renderLiterals(sql, values)}; SELECT 7 AS tail`,
                types: PG_TYPES,
              });
              const results = inlined as unknown as Array<{ rows: unknown[] }>;
              expect(results).toHaveLength(2);
              expect(results[0]?.rows).toEqual(bound.rows);
              expect(results[1]?.rows).toEqual([{ tail: 7 }]);
            },
          ),
          { numRuns: 300 },
        );
      });
    });
  }
});
