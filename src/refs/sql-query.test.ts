import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BatonError, isBatonError } from '../core/index.ts';
import { type SqliteDatabase, sqliteDriver } from '../store/index.ts';
import { ManualClock } from '../time/index.ts';
import { parseDataReference } from './reference-schema.ts';
import { createResolver, type Resolver } from './resolver.ts';
import { buildSelect, compileTables, sqliteExecutor, type TableDeclarations } from './sql-query.ts';

const { Database } = sqliteDriver();

const tables: TableDeclarations = {
  knowledge_atoms: {
    columns: ['atom_id', 'paper_id', 'atom_type', 'content', 'confidence', 'domain', 'verified'],
  },
  papers: { columns: ['paper_id', 'title'], source: 'papers_view' },
};

let dir: string;
let db: SqliteDatabase;
let resolver: Resolver;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'baton-refs-db-'));
  db = new Database(path.join(dir, 'refs.db'));
  db.exec(`
    CREATE TABLE knowledge_atoms (atom_id TEXT, paper_id TEXT, atom_type TEXT, content TEXT,
      confidence REAL, domain TEXT, verified INTEGER, secret TEXT);
    CREATE TABLE papers_table (paper_id TEXT, title TEXT, internal_notes TEXT);
    CREATE VIEW papers_view AS SELECT paper_id, title FROM papers_table;
    CREATE TABLE x (y INTEGER);
    INSERT INTO papers_table VALUES ('paper_001', 'Attention', 'n');
  `);
  const insert = db.prepare('INSERT INTO knowledge_atoms VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('a1', 'paper_001', 'claim', 'uses 100% attention', 0.95, 'deep_learning', 1, 's');
  insert.run('a2', 'paper_001', 'evidence', 'BLEU_28', 0.7, 'deep_learning', 0, 's');
  insert.run('a3', 'paper_001', 'methodology', 'self attention', 0.8, 'deep_learning', 1, 's');
  insert.run('a4', 'paper_002', 'claim', 'other paper', 0.99, null, 1, 's');
  resolver = createResolver({
    tables,
    sql: sqliteExecutor(db),
    maxQueryLimit: 3,
    clock: new ManualClock(),
    getTaskOutput: async () => ({ status: 'missing' }),
  });
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const query = (extra: Record<string, unknown>) =>
  resolver.resolveReference({ ref_type: 'db_query', table: 'knowledge_atoms', ...extra });
const rows = async (extra: Record<string, unknown>) => {
  const r = await query(extra);
  if (!r.ok) throw new Error(r.failure.error_message);
  return r.value as Array<Record<string, unknown>>;
};

describe('db_query on SQLite', () => {
  it("runs the protocol's example: AND conditions, in, select, order_by desc, limit", async () => {
    expect(
      await rows({
        conditions: [
          { field: 'paper_id', operator: 'eq', value: 'paper_001' },
          { field: 'atom_type', operator: 'in', value: ['claim', 'evidence'] },
        ],
        select: ['atom_id', 'content', 'confidence'],
        order_by: { field: 'confidence', direction: 'desc' },
        limit: 50,
      }),
    ).toEqual([
      { atom_id: 'a1', content: 'uses 100% attention', confidence: 0.95 },
      { atom_id: 'a2', content: 'BLEU_28', confidence: 0.7 },
    ]);
  });

  it.each([
    [{ field: 'confidence', operator: 'gt', value: 0.8 }, ['a1', 'a4']],
    [{ field: 'confidence', operator: 'gte', value: 0.8 }, ['a1', 'a3', 'a4']],
    [{ field: 'confidence', operator: 'lt', value: 0.8 }, ['a2']],
    [{ field: 'confidence', operator: 'lte', value: 0.8 }, ['a2', 'a3']],
    [{ field: 'atom_type', operator: 'ne', value: 'claim' }, ['a2', 'a3']],
    [{ field: 'domain', operator: 'eq', value: null }, ['a4']],
    [{ field: 'domain', operator: 'ne', value: null }, ['a1', 'a2', 'a3']],
    [{ field: 'verified', operator: 'eq', value: true }, ['a1', 'a3', 'a4']],
    [{ field: 'atom_type', operator: 'in', value: [] }, []],
    [{ field: 'content', operator: 'contains', value: '100%' }, ['a1']],
    [{ field: 'content', operator: 'contains', value: '_' }, ['a2']],
    [{ field: 'content', operator: 'contains', value: 'attention' }, ['a1', 'a3']],
  ])('applies %j with bound values', async (condition, expected) => {
    const got = await rows({
      conditions: [condition],
      select: ['atom_id'],
      order_by: { field: 'atom_id' },
      limit: 10,
    });
    expect(got.map((r) => r.atom_id)).toEqual(expected);
  });

  it('caps limit at maxQueryLimit and lists only declared columns without select', async () => {
    const got = await rows({ limit: 1000 });
    expect(got).toHaveLength(3);
    expect(Object.keys(got[0]!)).toEqual(tables.knowledge_atoms!.columns);
  });

  it('reads a declared table through its configured source view', async () => {
    const r = await resolver.resolveReference({ ref_type: 'db_query', table: 'papers' });
    expect(r).toEqual({ ok: true, value: [{ paper_id: 'paper_001', title: 'Attention' }], attempts: 1 });
  });
});

describe('db_query refusals', () => {
  const deniedFor = async (raw: Record<string, unknown>, permitted?: string[]) => {
    const err = await resolver
      .resolveReference(
        { ref_type: 'db_query', ...raw },
        permitted ? { permissions: { tables: permitted } } : {},
      )
      .catch((e: unknown) => e);
    expect(isBatonError(err, 'REF_PERMISSION_DENIED')).toBe(true);
    return (err as BatonError).message;
  };

  it.each([
    [{ table: 'x' }, 'table "x" is not declared'],
    [{ table: 'papers; DROP TABLE x' }, 'not declared'],
    [{ table: 'papers_table' }, 'not declared'],
    [{ table: '__proto__' }, 'not declared'],
    [{ table: 'knowledge_atoms', select: ['secret'] }, 'column "secret" is not declared'],
    [{ table: 'knowledge_atoms', select: ['"a" OR 1=1'] }, 'is not declared'],
    [{ table: 'knowledge_atoms', select: ['*'] }, 'is not declared'],
    [
      { table: 'knowledge_atoms', conditions: [{ field: '1=1 --', operator: 'eq', value: 1 }] },
      'is not declared',
    ],
    [{ table: 'knowledge_atoms', order_by: { field: 'confidence; DROP TABLE x' } }, 'is not declared'],
  ])('refuses %j with REF_PERMISSION_DENIED', async (raw, message) => {
    expect(await deniedFor(raw)).toContain(message);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'x'").get()).toEqual({ n: 1 });
  });

  it("refuses a declared table outside the task's permitted tables", async () => {
    expect(await deniedFor({ table: 'knowledge_atoms' }, ['papers'])).toContain('permitted tables');
  });

  it('reports a declared table missing from the database as REF_NOT_FOUND', async () => {
    const broken = createResolver({
      tables: { ghosts: { columns: ['id'] } },
      sql: sqliteExecutor(db),
      clock: new ManualClock(),
      getTaskOutput: async () => ({ status: 'missing' }),
    });
    const r = await broken.resolveReference({ ref_type: 'db_query', table: 'ghosts' });
    expect(r).toMatchObject({
      ok: false,
      value: null,
      failure: { ref_type: 'db_query', error_code: 'REF_NOT_FOUND' },
    });
  });

  it.each([
    [{ 'bad name': { columns: ['a'] } }, 'tables.bad name'],
    [{ t: { columns: [] } }, 'tables.t.columns'],
    [{ t: { columns: ['ok', 'x"y'] } }, 'tables.t.columns[1]'],
    [{ t: { columns: ['a'], source: 'a; DROP TABLE x' } }, 'tables.t.source'],
  ])('refuses the table declaration %j with INVALID_OPTION naming %s', (decl, field) => {
    expect(() => compileTables(decl as TableDeclarations)).toThrow(field);
  });
});

describe('statements', () => {
  const catalog = compileTables(tables);
  const protocolExample = parseDataReference({
    ref_type: 'db_query',
    table: 'knowledge_atoms',
    conditions: [
      { field: 'paper_id', operator: 'eq', value: 'paper_001' },
      { field: 'atom_type', operator: 'in', value: ['claim', 'evidence'] },
      { field: 'content', operator: 'contains', value: '50%_off\\' },
      { field: 'domain', operator: 'ne', value: null },
      { field: 'verified', operator: 'eq', value: true },
    ],
    select: ['atom_id', 'content', 'confidence'],
    order_by: { field: 'confidence', direction: 'desc' },
    limit: 50,
  });
  if (protocolExample.ref_type !== 'db_query') throw new Error('unreachable');

  it('builds Postgres SQL with $n placeholders', () => {
    expect(buildSelect(protocolExample, catalog, 'postgres', { maxLimit: 1000 })).toMatchInlineSnapshot(`
      {
        "params": [
          "paper_001",
          "claim",
          "evidence",
          "%50\\%\\_off\\\\%",
          true,
          50,
        ],
        "sql": "SELECT "atom_id", "content", "confidence" FROM "knowledge_atoms" WHERE "paper_id" = $1 AND "atom_type" IN ($2, $3) AND "content" LIKE $4 ESCAPE '\\' AND "domain" IS NOT NULL AND "verified" = $5 ORDER BY "confidence" DESC LIMIT $6",
      }
    `);
  });

  it('builds the same statement for SQLite with ? placeholders and booleans as 1/0', () => {
    const pg = buildSelect(protocolExample, catalog, 'postgres', { maxLimit: 1000 });
    const lite = buildSelect(protocolExample, catalog, 'sqlite', { maxLimit: 1000 });
    expect(lite.sql).toBe(pg.sql.replace(/\$\d+/g, '?'));
    expect(lite.params).toEqual(pg.params.map((p) => (p === true ? 1 : p)));
  });
});

describe('scoped tables (a run reads its own flow rows only)', () => {
  let scoped: Resolver;
  beforeAll(() => {
    scoped = createResolver({
      tables: { logs: { columns: ['root_id', 'event'], source: 'scoped_logs', scopeColumn: 'root_id' } },
      sql: sqliteExecutor(db),
      clock: new ManualClock(),
      getTaskOutput: async () => ({ status: 'missing' }),
    });
    db.exec(`CREATE TABLE scoped_logs (root_id TEXT, event TEXT);
      INSERT INTO scoped_logs VALUES ('flow-a', 'a1'), ('flow-a', 'a2'), ('flow-b', 'b1')`);
  });
  const read = (opts: Parameters<Resolver['resolveReference']>[1]) =>
    scoped.resolveReference({ ref_type: 'db_query', table: 'logs', select: ['event'] }, opts);

  it("returns only the scope's rows, even when a condition asks for another scope", async () => {
    expect(await read({ scope: 'flow-b' })).toMatchObject({ ok: true, value: [{ event: 'b1' }] });
    const other = await scoped.resolveReference(
      {
        ref_type: 'db_query',
        table: 'logs',
        conditions: [{ field: 'root_id', operator: 'eq', value: 'flow-a' }],
      },
      { scope: 'flow-b' },
    );
    expect(other).toMatchObject({ ok: true, value: [] });
  });

  it('refuses a scoped table to a resolution without a scope, and reads all rows with runs "any"', async () => {
    const err = await read({}).catch((e: unknown) => e);
    expect(isBatonError(err, 'REF_PERMISSION_DENIED')).toBe(true);
    expect((err as Error).message).toContain('"logs" is scoped');
    const all = await read({ scope: 'flow-b', permissions: { runs: 'any' } });
    expect(all.ok && (all.value as unknown[]).length).toBe(3);
  });

  it('refuses a scope column that is not a plain identifier, and a bad runs permission', async () => {
    expect(() => compileTables({ t: { columns: ['a'], scopeColumn: 'a; --' } })).toThrow(
      'tables.t.scopeColumn',
    );
    const err = await read({ scope: 'x', permissions: { runs: 'all' as never } }).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toContain('permissions.runs');
  });
});
