/**
 * A run read as an array of its columns (claims and the batch's lock) must be the record `toRun`
 * makes of the same row read as an object, for every column, and name every column a run has.
 */
import { expect, it } from 'vitest';
import { ManualClock } from '../../time/index.ts';
import { type RunRow, toRun } from '../rows.ts';
import { T0 } from '../store.contract.ts';
import { describePostgres, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import { RUN_WIDTH, runColumns, runFromArray } from './run-columns.ts';
import { PG_TYPES } from './sql.ts';

const schemas = testSchemas();

describePostgres('runs read as arrays', () => {
  it('decode to the record toRun makes of the row as an object, and name every column of runs', async () => {
    const schema = schemas.fresh();
    const store = await schemas.open(new ManualClock(T0), schema);
    await store.createRuns(
      [
        { id: 'flow', kind: 'flow', name: 'f', input: { a: [1, 'two'] }, status: 'running', budgetMs: 5_000 },
        {
          id: 'step',
          kind: 'task',
          name: 't',
          input: "it's",
          status: 'queued',
          parentId: 'flow',
          rootId: 'flow',
          stepId: 's1',
          dependsOn: ['s0'],
          priority: 3,
          options: { mode: 'fast' },
        },
      ],
      [],
    );
    const [claimed] = await store.claimRuns({
      owner: 'w',
      leaseMs: 1_000,
      limit: 1,
      names: ['t'],
      claim: 'c1',
    });
    expect(claimed?.id).toBe('step');
    await store.close();
    await withClient(async (c) => {
      const objects = await c.query({ text: `SELECT * FROM ${schema}.runs ORDER BY id`, types: PG_TYPES });
      const arrays = await c.query({
        text: `SELECT ${runColumns()} FROM ${schema}.runs ORDER BY id`,
        types: PG_TYPES,
        rowMode: 'array',
      });
      expect(arrays.rows).toHaveLength(2);
      arrays.rows.forEach((values, i) => {
        const row = objects.rows[i] as RunRow;
        expect(runFromArray(values)).toEqual({ run: toRun(row), leaseClaim: row.lease_claim ?? null });
      });
      expect(objects.rows[1].lease_claim).toBe('c1');
      // A column added to runs by a migration is either read here too or deliberately left out.
      const names = objects.fields.map((f) => f.name);
      const read = runColumns().split(', ');
      expect(read).toHaveLength(RUN_WIDTH);
      expect(names.filter((n) => !read.includes(n)).sort()).toEqual(['created_seq']);
      expect(read.filter((n) => !names.includes(n))).toEqual([]);
    });
  });
});
