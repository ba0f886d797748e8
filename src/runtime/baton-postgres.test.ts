/**
 * `createBaton` on Postgres: selected by a URL (with `?schema=`) or handed an opened PostgresStore,
 * db_query references read the Postgres tables (Baton's `execution_logs` view and the
 * application's declared tables), and a bad or unreachable URL fails clearly without its password.
 */
import { afterAll, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { createHttpHandler } from '../http/index.ts';
import {
  describePostgres,
  PG_URL,
  testSchemas,
  withClient,
} from '../store/postgres/fixtures/pg-test-server.ts';
import { openPostgresStore } from '../store/postgres/index.ts';
import { createBaton } from './baton.ts';
import { defineTask } from './define-task.ts';
import { referencesStayInTheirFlow } from './fixtures/flow-scope.ts';

const SECRET = 'p4ss-w0rd';
const schemas = testSchemas();
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of closers) await c();
});

function urlFor(schema: string, password = SECRET): string {
  const url = new URL(PG_URL);
  url.password = password;
  url.searchParams.set('schema', schema);
  return url.toString();
}

const seen: unknown[] = [];
const reader = defineTask({
  name: 'reader',
  run: async (input: { history: unknown; notes: unknown }) => {
    seen.push(input);
    return 'read';
  },
});

const refs = {
  history: {
    data_reference: {
      ref_type: 'db_query',
      table: 'execution_logs',
      conditions: [{ field: 'event', operator: 'eq', value: 'run:created' }],
      select: ['task', 'event'],
      limit: 5,
    },
  },
  notes: {
    data_reference: {
      ref_type: 'db_query',
      table: 'notes',
      conditions: [{ field: 'score', operator: 'gt', value: 1 }],
      order_by: { field: 'score', direction: 'desc' },
    },
  },
};

describePostgres('createBaton on Postgres', () => {
  it('opens the store a postgres:// URL names and resolves db_query references on it', async () => {
    const schema = schemas.fresh();
    await withClient((c) =>
      c.query(
        `CREATE SCHEMA ${schema}_app; CREATE TABLE ${schema}_app.notes (title text, score bigint);
         INSERT INTO ${schema}_app.notes VALUES ('a', 1), ('b', 5), ('c', 3)`,
      ),
    );
    closers.push(() => withClient((c) => c.query(`DROP SCHEMA ${schema}_app CASCADE`)).then(() => {}));
    const baton = createBaton({
      store: urlFor(schema),
      refs: { tables: { notes: { columns: ['title', 'score'], source: `${schema}_app.notes` } } },
    });
    try {
      expect(baton.store.dialect).toBe('postgres');
      expect(baton.store.location).not.toContain(SECRET);
      expect(baton.store.location).toContain(`schema=${schema}`);
      seen.length = 0;
      const run = await baton.start(reader, refs);
      expect((await run.result()).status).toBe('succeeded');
      expect(seen[0]).toMatchObject({
        history: { data: [{ task: 'reader', event: 'run:created' }] },
        notes: {
          data: [
            { title: 'b', score: 5 },
            { title: 'c', score: 3 },
          ],
        },
      });
    } finally {
      await baton.close();
    }
    // The tables are in the schema the URL named.
    const tables = await withClient((c) =>
      c.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema]),
    );
    expect((tables.rows[0] as { n: number }).n).toBeGreaterThan(5);
  });

  it('takes an opened PostgresStore without refs.sql (execution_logs is read from it)', async () => {
    const store = await openPostgresStore({ connectionString: PG_URL, schema: schemas.fresh() });
    const baton = createBaton({ store });
    try {
      seen.length = 0;
      const run = await baton.start(reader, { history: refs.history, notes: 'none' });
      expect((await run.result()).status).toBe('succeeded');
      expect(seen[0]).toMatchObject({ history: { data: [{ task: 'reader', event: 'run:created' }] } });
    } finally {
      await baton.close();
      await store.close();
    }
  });

  it("scopes references to the run's own flow on Postgres too (issue 11 item 8)", async () => {
    const baton = createBaton({ store: urlFor(schemas.fresh()) });
    try {
      await referencesStayInTheirFlow(baton);
    } finally {
      await baton.close();
    }
  });

  it('fails clearly, without the password, on a malformed or unreachable URL', async () => {
    let err: unknown;
    try {
      createBaton({ store: `postgres://root:${SECRET}@127.0.0.1:99999/test` });
    } catch (e) {
      err = e;
    }
    expect(isBatonError(err) && err.code).toBe('STORE_INVALID');
    expect((err as Error).message).toMatch(/not a usable Postgres URL/);
    expect(JSON.stringify(err) + (err as Error).message + (err as Error).stack).not.toContain(SECRET);

    const baton = createBaton({ store: `postgres://root:${SECRET}@127.0.0.1:1/test`, worker: false });
    const failed = await baton.start(reader, { history: 'x', notes: 'y' }).catch((e: unknown) => e);
    expect(isBatonError(failed) && failed.code).toBe('STORE_INVALID');
    expect((failed as Error).message).toMatch(/cannot open the Postgres store at postgres:\/\/root:\*\*\*@/);
    expect(String((failed as Error).stack)).not.toContain(SECRET);
    await baton.close();
  });

  it("reports the store's warnings on /health and its figures on /metrics (issue 13 item 5)", async () => {
    const schema = schemas.fresh();
    const baton = createBaton({ store: urlFor(schema), worker: false });
    closers.push(() => baton.close());
    const handler = createHttpHandler(baton);
    const health = (await (await handler(new Request('http://baton.test/health'))).json()) as {
      ok: boolean;
      store: { dialect: string; warnings: Array<{ code: string; message: string }> };
    };
    expect(health.ok).toBe(true);
    expect(health.store.dialect).toBe('postgres');
    const autovacuum = await withClient((c) => c.query(`SELECT current_setting('autovacuum') AS a`));
    expect(health.store.warnings.some((w) => w.code === 'autovacuum_off')).toBe(
      autovacuum.rows[0].a !== 'on',
    );
    const metrics = await (await handler(new Request('http://baton.test/metrics'))).text();
    expect(metrics).toMatch(/^baton_pg_autovacuum [01]$/m);
    expect(metrics).toMatch(/^baton_pg_table_bytes\{table="runs"\} \d+$/m);
    expect(metrics).toContain('# TYPE baton_pg_clock_skew_ms gauge');
    if (autovacuum.rows[0].a !== 'on')
      expect(metrics).toContain('baton_store_warning{code="autovacuum_off"} 1');
    handler.close();
  });
});
