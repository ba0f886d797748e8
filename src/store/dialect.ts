/**
 * Where the two stores' SQL differs, declared once: how parameters are written, how a list of ids
 * is matched, and how each store reads a flow's steps in creation order. Both stores render the
 * writes of `run-rules.ts` through here.
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
  },
  postgres: {
    param: (n) => `$${n}`,
    inList: (column, addParam, values) =>
      values.length === 1
        ? `${column} = ${addParam(values[0])}`
        : `${column} = ANY(${addParam(values)}::text[])`,
    // An identity column stands in for SQLite's rowid.
    creationOrder: 'created_seq',
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
