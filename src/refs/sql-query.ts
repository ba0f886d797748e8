/**
 * db_query references as one parameterised SELECT, for SQLite now and Postgres later.
 *
 * Only tables and columns declared in configuration can be read. An identifier from a reference
 * is never parsed or cleaned: it is either exactly a declared name, or the reference is refused
 * with REF_PERMISSION_DENIED (so `papers; DROP TABLE x` is simply an undeclared table). Declared
 * names are checked once, at configuration, to be plain identifiers, and are still quoted. Every
 * value is a bound parameter, `LIMIT` included.
 *
 * Operators: eq/ne (`IS NULL`/`IS NOT NULL` for null), in (an empty list matches nothing),
 * gt/gte/lt/lte, contains (`LIKE '%…%' ESCAPE '\'` with `\`, `%`, `_` escaped). SQLite's LIKE
 * ignores ASCII case, Postgres' does not; booleans bind as 1/0 on SQLite.
 * Without `select` the declared columns are listed (never `*`, which would read undeclared ones).
 */
import { BatonError, ValidationError } from '../core/index.ts';
import type { Condition, DbQueryReference } from './reference-schema.ts';

export interface SqlExecutor {
  readonly dialect: 'sqlite' | 'postgres';
  query(sql: string, params: unknown[]): Promise<Record<string, unknown>[]>;
}

export interface TableDeclaration {
  /** Columns a reference may select, filter and order by. */
  columns: readonly string[];
  /** The real table or view (may be `schema.name`). @default the declared name */
  source?: string;
  /**
   * A column that confines every read to the resolution's scope (`"root_id"` for Baton's run
   * history: a run reads its own flow's rows). Without a scope the table is not readable; a
   * resolution permitted `runs: "any"` reads all rows.
   */
  scopeColumn?: string;
}

export type TableDeclarations = Readonly<Record<string, TableDeclaration>>;

export interface SqlStatement {
  sql: string;
  params: unknown[];
}

/** Dialect differences, declared once. */
const Dialects = {
  sqlite: {
    placeholder: (_n: number) => '?',
    bind: (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v),
  },
  postgres: {
    placeholder: (n: number) => `$${n}`,
    bind: (v: unknown) => v,
  },
} as const;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Validated declarations, looked up by own name only (no prototype keys). */
interface CompiledTable {
  columns: ReadonlySet<string>;
  source: string;
  ordered: string[];
  scopeColumn: string | undefined;
}
export type TableCatalog = ReadonlyMap<string, CompiledTable>;

/** Checks configured tables once; errors are INVALID_OPTION naming `tables.<name>…`. */
export function compileTables(tables: TableDeclarations | undefined): TableCatalog {
  const out = new Map<string, CompiledTable>();
  for (const [name, decl] of Object.entries(tables ?? {})) {
    const field = `tables.${name}`;
    const fail = (f: string, expected: string, got: unknown) =>
      new ValidationError(f, expected, got, { code: 'INVALID_OPTION' });
    if (!IDENTIFIER.test(name)) throw fail(field, 'a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)', name);
    const columns = decl?.columns;
    if (!Array.isArray(columns) || columns.length === 0)
      throw fail(`${field}.columns`, 'a non-empty array of column names', columns);
    columns.forEach((c, i) => {
      if (typeof c !== 'string' || !IDENTIFIER.test(c))
        throw fail(`${field}.columns[${i}]`, 'a plain SQL identifier', c);
    });
    const source = decl.source ?? name;
    if (
      typeof source !== 'string' ||
      !source.split('.').every((p) => IDENTIFIER.test(p)) ||
      source.split('.').length > 2
    )
      throw fail(`${field}.source`, 'a table or view name, optionally schema-qualified', source);
    const scopeColumn = decl.scopeColumn;
    if (scopeColumn !== undefined && (typeof scopeColumn !== 'string' || !IDENTIFIER.test(scopeColumn)))
      throw fail(`${field}.scopeColumn`, 'a plain SQL identifier', scopeColumn);
    out.set(name, { columns: new Set(columns), source, ordered: [...columns], scopeColumn });
  }
  return out;
}

function denied(message: string, field: string): BatonError {
  return new BatonError('REF_PERMISSION_DENIED', message, { data: { field } });
}

export interface BuildOptions {
  maxLimit: number;
  /** The task's permitted tables; undefined for all declared ones. */
  permittedTables?: readonly string[] | undefined;
  /** Rows of scoped tables with this scope only; null: all rows; undefined: scoped tables refused. */
  scope?: string | null | undefined;
}

export function buildSelect(
  ref: DbQueryReference,
  catalog: TableCatalog,
  dialect: SqlExecutor['dialect'],
  opts: BuildOptions,
): SqlStatement {
  const d = Dialects[dialect];
  const table = catalog.get(ref.table);
  if (!table) throw denied(`table ${JSON.stringify(ref.table)} is not declared for references`, 'table');
  if (opts.permittedTables && !opts.permittedTables.includes(ref.table))
    throw denied(`table ${JSON.stringify(ref.table)} is not among the task's permitted tables`, 'table');
  const column = (name: string, field: string) => {
    if (!table.columns.has(name))
      throw denied(
        `column ${JSON.stringify(name)} is not declared for table ${JSON.stringify(ref.table)}`,
        field,
      );
    return quote(name);
  };
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(d.bind(v));
    return d.placeholder(params.length);
  };
  const selected = (ref.select ?? table.ordered).map((c, i) => column(c, `select[${i}]`));
  const source = table.source.split('.').map(quote).join('.');
  let sql = `SELECT ${selected.join(', ')} FROM ${source}`;
  const where: string[] = [];
  if (table.scopeColumn !== undefined && opts.scope !== null) {
    if (opts.scope === undefined)
      throw denied(
        `table ${JSON.stringify(ref.table)} is scoped: it is readable only within a scope (a run's own flow)`,
        'table',
      );
    where.push(`${quote(table.scopeColumn)} = ${bind(opts.scope)}`);
  }
  (ref.conditions ?? []).forEach((c, i) => {
    where.push(condition(c, column(c.field, `conditions[${i}].field`), bind));
  });
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  if (ref.order_by)
    sql += ` ORDER BY ${column(ref.order_by.field, 'order_by.field')} ${ref.order_by.direction === 'desc' ? 'DESC' : 'ASC'}`;
  sql += ` LIMIT ${bind(Math.min(ref.limit ?? opts.maxLimit, opts.maxLimit))}`;
  return { sql, params };
}

const COMPARISON = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function condition(c: Condition, col: string, bind: (v: unknown) => string): string {
  switch (c.operator) {
    case 'eq':
      return c.value === null ? `${col} IS NULL` : `${col} = ${bind(c.value)}`;
    case 'ne':
      return c.value === null ? `${col} IS NOT NULL` : `${col} <> ${bind(c.value)}`;
    case 'in': {
      const list = c.value as unknown[];
      return list.length === 0 ? '1 = 0' : `${col} IN (${list.map(bind).join(', ')})`;
    }
    case 'contains': {
      const escaped = (c.value as string).replace(/[\\%_]/g, (m) => `\\${m}`);
      return `${col} LIKE ${bind(`%${escaped}%`)} ESCAPE '\\'`;
    }
    default:
      return `${col} ${COMPARISON[c.operator]} ${bind(c.value)}`;
  }
}

/** Runs the statement; executor failures (no such table, connection lost) are REF_NOT_FOUND. */
export async function resolveDbQuery(
  ref: DbQueryReference,
  catalog: TableCatalog,
  sql: SqlExecutor | undefined,
  opts: BuildOptions,
): Promise<Record<string, unknown>[]> {
  if (!sql) throw denied('no database is configured for db_query references', 'table');
  const statement = buildSelect(ref, catalog, sql.dialect, opts);
  try {
    return await sql.query(statement.sql, statement.params);
  } catch (cause) {
    throw new BatonError(
      'REF_NOT_FOUND',
      `query on table ${JSON.stringify(ref.table)} failed: ${(cause as Error)?.message ?? cause}`,
      {
        cause,
        data: { field: 'table' },
      },
    );
  }
}

/** An executor over a better-sqlite3 style database (`prepare(sql).all(...params)`). */
export function sqliteExecutor(db: {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}): SqlExecutor {
  return {
    dialect: 'sqlite',
    query: async (sql, params) => db.prepare(sql).all(...params) as Record<string, unknown>[],
  };
}
