/**
 * A claim reads only runs it can take (migration 0023): runs asleep on a timer for later are found
 * by their wake time and never stepped over. The test captures the claim statement the store sends
 * and runs it again under EXPLAIN ANALYZE (rolled back) to count the rows of `runs` its plan read.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { T0, task } from '../store.contract.ts';
import { describePostgres, PG_URL, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { openPostgresStore, type PostgresStore } from './index.ts';

const schemas = testSchemas();
const SLEEPING = 10_000;

/** The claim statements the store's clients send, text and values. */
const claims: Array<{ text: string; values: unknown[] }> = [];
class CapturingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: forwards node-postgres's overloads unchanged.
  override query(...args: any[]): any {
    const config: unknown = args[0];
    if (typeof config === 'object' && config !== null && 'text' in config && 'values' in config) {
      const { text, values } = config as { text: unknown; values: unknown };
      if (typeof text === 'string' && /SET status = 'running'/.test(text) && Array.isArray(values))
        claims.push({ text, values });
    }
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
    const plan = await withClient(async (c) => {
      await c.query('BEGIN');
      try {
        await c.query(`SET LOCAL search_path TO "${schema}"`);
        const res = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${claim.text}`, claim.values);
        return (res.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan;
      } finally {
        await c.query('ROLLBACK');
      }
    });
    if (!plan) throw new Error('EXPLAIN returned no plan');
    // The run claimed above is no longer claimable: the plan reads the one ready run and nothing asleep.
    expect(runsRowsRead(plan)).toBeLessThan(20);
  });
});
