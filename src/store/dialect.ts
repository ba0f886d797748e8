/**
 * Where the two stores' SQL differs, declared once: how parameters are written, how a list of ids
 * is matched, how each store reads a flow's steps in creation order, and the few functions the
 * LangGraph tables need. Both stores render the writes of `run-rules.ts` and the statements of
 * `langgraph-sql.ts` through here.
 */
import type { RunUpdate } from './run-rules.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Dialect {
  /** The placeholder of the n-th parameter (1-based). */
  param(n: number): string;
  /** `column` is one of the values of one array parameter. */
  inList(column: string, addParam: (value: unknown) => string, values: readonly string[]): string;
  /** Orders a flow's steps as they were created. */
  readonly creationOrder: string;
  /** The larger of two values (a scalar function; `max` aggregates in Postgres). */
  greatest(a: string, b: string): string;
  /** A FROM item of a JSON object's (key, value) pairs; it may name columns of earlier FROM items. */
  jsonEach(json: string): string;
  /** A pair's value as text, as it is compared with TEXT columns. */
  jsonText(value: string): string;
  /** The TEXT column holding a JSON object has this top-level key with a non-null value. */
  jsonHasKey(column: string, key: string): string;
}

export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  sqlite: {
    param: () => '?',
    // One statement shape for any number of ids (prepared statements are cached by their text).
    inList: (column, addParam, values) =>
      values.length === 1
        ? `${column} = ${addParam(values[0])}`
        : `${column} IN (SELECT value FROM json_each(${addParam(JSON.stringify(values))}))`,
    // The implicit rowid is insertion order.
    creationOrder: 'rowid',
    greatest: (a, b) => `max(${a}, ${b})`,
    jsonEach: (json) => `json_each(${json})`,
    // json_each gives a number as a number; versions are compared as the text they are stored as.
    jsonText: (value) => `CAST(${value} AS TEXT)`,
    jsonHasKey: (column, key) => `json_extract(${column}, '$.${key}') IS NOT NULL`,
  },
  postgres: {
    param: (n) => `$${n}`,
    inList: (column, addParam, values) =>
      values.length === 1
        ? `${column} = ${addParam(values[0])}`
        : `${column} = ANY(${addParam(values)}::text[])`,
    // An identity column stands in for SQLite's rowid.
    creationOrder: 'created_seq',
    greatest: (a, b) => `GREATEST(${a}, ${b})`,
    // channel_versions is TEXT holding JSON.
    jsonEach: (json) => `jsonb_each_text(${json}::jsonb)`,
    jsonText: (value) => value,
    jsonHasKey: (column, key) => `(${column}::jsonb -> '${key}') IS NOT NULL`,
  },
};

export interface Statement {
  text: string;
  values: unknown[];
}

/** `UPDATE <runs> SET … WHERE id …` for one planned update. */
export function renderRunUpdate(dialect: DialectName, runsTable: string, update: RunUpdate): Statement {
  const d = DIALECTS[dialect];
  const values: unknown[] = [];
  const addParam = (value: unknown) => d.param(values.push(value));
  const sets = update.set.map(([column, value]) => `${column} = ${addParam(value)}`);
  let where = d.inList('id', addParam, update.ids);
  if (update.ifStatus) where += ` AND status = ${addParam(update.ifStatus)}`;
  return { text: `UPDATE ${runsTable} SET ${sets.join(', ')} WHERE ${where}`, values };
}
