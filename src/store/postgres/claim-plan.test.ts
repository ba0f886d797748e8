/**
 * A claim reads only runs it can take (migration 0023): runs asleep on a timer for later are found
 * by their wake time and never stepped over. A batch of ends locks its runs by key, whatever the
 * table holds. A page of top-level runs is read in key order from the primary key (migration 0025
 * dropped the index that held only top-level runs), not sorted from the whole table. The tests capture the statement the store sends and run it again under EXPLAIN
 * ANALYZE (rolled back) to count the rows of `runs` its plan read.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { renderRunQuery } from '../run-query.ts';
import { T0, task } from '../store.contract.ts';
import { describePostgres, PG_URL, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { openPostgresStore, type PostgresStore } from './index.ts';

const schemas = testSchemas();
const SLEEPING = 10_000;

/** The claim statements the store's clients send, text and values. */
const claims: Array<{ text: string; values: unknown[] }> = [];
/** The statements that lock a write batch's runs (sent with literals, in a multi-statement message). */
const locks: string[] = [];
class CapturingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: forwards node-postgres's overloads unchanged.
  override query(...args: any[]): any {
    const config: unknown = args[0];
    if (typeof config === 'object' && config !== null && 'text' in config && 'values' in config) {
      const { text, values } = config as { text: unknown; values: unknown };
      if (typeof text === 'string' && /SET status = 'running'/.test(text) && Array.isArray(values))
        claims.push({ text, values });
    }
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text === 'string')
      for (const statement of text.split(';\n'))
        if (statement.includes('AS has_children') && statement.includes('FOR UPDATE OF r'))
          locks.push(statement);
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (super.query as any)(...args);
  }
}

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows of `runs` the plan's scans read: those they returned and those their filters dropped. */
function runsRowsRead(node: PlanNode): number {
  const here =
    node['Relation Name'] === 'runs'
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1) +
        (node['Rows Removed by Index Recheck'] ?? 0)
      : 0;
  return here + (node.Plans ?? []).reduce((sum, p) => sum + runsRowsRead(p), 0);
}

/** EXPLAIN ANALYZE of `text` in the schema, rolled back. */
function planOf(schema: string, text: string, values: unknown[] = []): Promise<PlanNode> {
  return withClient(async (c) => {
    await c.query('BEGIN');
    try {
      await c.query(`SET LOCAL search_path TO "${schema}"`);
      const res = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      const plan = (res.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan;
      if (!plan) throw new Error('EXPLAIN returned no plan');
      return plan;
    } finally {
      await c.query('ROLLBACK');
    }
  });
}

describePostgres('Postgres claim plan', () => {
  let store: PostgresStore;
  let pool: pg.Pool;
  afterEach(async () => {
    await store.close();
    await pool.end();
  });

  it(`reads a handful of rows, not the ${SLEEPING.toLocaleString('en')} runs asleep for later`, async () => {
    const schema = schemas.fresh();
    pool = new pg.Pool({ connectionString: PG_URL, max: 4, Client: CapturingClient });
    store = await openPostgresStore({ pool, schema, clock: new ManualClock(T0) });
    for (let i = 0; i < SLEEPING; i += 2_000)
      await store.createRuns(
        Array.from({ length: 2_000 }, (_, k) =>
          // Half retry backoffs (queued with a wake time), half sleeps (waiting on a timer).
          task(`s${String(i + k).padStart(6, '0')}`, {
            ...(k % 2 === 0
              ? { status: 'queued' as const }
              : { status: 'waiting' as const, waitReason: 'timer' as const }),
            wakeAt: T0 + 3_600_000,
            priority: 5,
          }),
        ),
        [],
      );
    await store.createRuns(
      [task('due', { status: 'waiting', waitReason: 'timer', wakeAt: T0 - 1 }), task('ready')],
      [],
    );
    await withClient((c) => c.query(`ANALYZE "${schema}".runs`));
    claims.length = 0;
    const got = await store.claimRuns({ owner: 'w', leaseMs: 60_000, limit: 1, names: ['work'] });
    expect(got.map((r) => r.id)).toEqual(['due']);
    expect(claims).toHaveLength(1);
    const [claim] = claims;
    if (!claim) throw new Error('no claim statement was sent');
    const plan = await planOf(schema, claim.text, claim.values);
    // The run claimed above is no longer claimable: the plan reads the one ready run and nothing asleep.
    expect(runsRowsRead(plan)).toBeLessThan(20);
  });

  it(`locks a batch of ends by key, not by reading the ${SLEEPING.toLocaleString('en')} other runs`, async () => {
    const schema = schemas.fresh();
    pool = new pg.Pool({ connectionString: PG_URL, max: 4, Client: CapturingClient });
    store = await openPostgresStore({ pool, schema, clock: new ManualClock(T0) });
    for (let i = 0; i < SLEEPING; i += 2_000)
      await store.createRuns(
        Array.from({ length: 2_000 }, (_, k) =>
          task(`o${String(i + k).padStart(6, '0')}`, { name: 'other' }),
        ),
        [],
      );
    const ids = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, '0')}`);
    await store.createRuns(
      ids.map((id) => task(id)),
      [],
    );
    await withClient((c) => c.query(`ANALYZE "${schema}".runs`));
    const runs = await store.claimRuns({ owner: 'w', leaseMs: 60_000, limit: ids.length, names: ['work'] });
    expect(runs).toHaveLength(ids.length);
    locks.length = 0;
    // Ended together: one batch, whose first transition locks all twenty (flow-writes.ts lockMany).
    await Promise.all(
      runs.map((run) =>
        store.transition(run.id, { status: 'succeeded', output: 1, finishedAt: T0 }, [], {
          fence: { runId: run.id, token: run.leaseToken },
        }),
      ),
    );
    const [lock] = locks;
    if (!lock) throw new Error('no batch lock statement was sent');
    const plan = await planOf(schema, lock);
    // The twenty runs (and their roots, themselves), their children looked up by index: a few dozen.
    // Written with `OR id IN (…)` the plan read all 10,020 runs, and again for has_children.
    expect(runsRowsRead(plan)).toBeLessThan(200);
  });

  it('lists a page of top-level runs from the primary key, stepping over only the steps among them', async () => {
    const schema = schemas.fresh();
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    store = await openPostgresStore({ pool, schema, clock: new ManualClock(T0) });
    // 10,000 top-level runs; every 10th a flow with 4 steps (ids sort right after their flow's).
    for (let i = 0; i < SLEEPING; i += 2_000)
      await store.createRuns(
        Array.from({ length: 2_000 }, (_, k) => {
          const id = `t${String(i + k).padStart(6, '0')}`;
          if ((i + k) % 10 !== 0) return [task(id)];
          return [
            { ...task(id, { status: 'running' }), kind: 'flow' as const, name: 'flow' },
            ...[1, 2, 3, 4].map((n) => task(`${id}.${n}`, { parentId: id, rootId: id, stepId: `s${n}` })),
          ];
        }).flat(),
        [],
      );
    await withClient((c) => c.query(`ANALYZE "${schema}".runs`));
    const page = renderRunQuery('postgres', `"${schema}".runs`, { limit: 100 });
    const listed = await store.listRuns({ limit: 100 });
    expect(listed.map((r) => r.id)).toEqual(
      Array.from({ length: 100 }, (_, i) => `t${String(SLEEPING - 1 - i).padStart(6, '0')}`),
    );
    const plan = await planOf(schema, page.text, page.values);
    // 100 returned and the 40 steps of the 10 flows among them; a sort of every top-level run would read 10,000.
    expect(runsRowsRead(plan)).toBeLessThan(200);
  });
});
