import { describe, expect, it } from 'vitest';
import { openDatabase } from './open-database.ts';
import { RUN_COLUMN_COUNT, RUN_COLUMNS, runRowOf } from './run-row.ts';

describe('runRowOf', () => {
  it("names every column of the runs table, in RUN_COLUMNS' order, so a new column is not left out", () => {
    const db = openDatabase(':memory:');
    const table = (db.pragma('table_info(runs)') as Array<{ name: string }>).map((c) => c.name);
    const listed = RUN_COLUMNS.split(',').map((c) => c.trim());
    expect(listed).toHaveLength(RUN_COLUMN_COUNT);
    expect([...listed].sort()).toEqual([...table].sort());
    db.close();
  });

  it('builds from a raw row the object the driver builds', () => {
    const db = openDatabase(':memory:');
    db.prepare(
      `INSERT INTO runs (id, parent_id, root_id, step_id, kind, name, input, status, wait_reason, wake_at, depends_on,
         priority, created_at, updated_at, budget_ms, source, options, meta, started_at, output, error, lease_owner,
         lease_expires_at, deadline_at, finished_at, expires_at)
       VALUES ('r1', 'p', 'root', 's', 'task', 't', '{"a":1}', 'running', NULL, 5, '[]', 3, 1, 2, 100, 'api', '{}',
         '{"m":true}', 4, '"out"', NULL, 'w1', 9, 50, NULL, 77)`,
    ).run();
    const object = db.prepare('SELECT * FROM runs WHERE id = ?').get('r1');
    const raw = db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`).raw(true).get('r1') as unknown[];
    expect(runRowOf(raw)).toEqual(object);
    db.close();
  });
});
