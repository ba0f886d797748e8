/** Reads of runs outside any write (they see what has committed): a page, counts, the last event. */
import type { RunRecord } from '../records.ts';
import { type RunRow, toRun } from '../rows.ts';
import { renderRunQuery } from '../run-query.ts';
import type { RunQuery } from '../store.ts';
import type { SqliteContext } from './sqlite-context.ts';

export function listRuns(ctx: SqliteContext, q: RunQuery): RunRecord[] {
  const { text, values } = renderRunQuery('sqlite', 'runs', q);
  return (ctx.stmt(text).all(...values) as RunRow[]).map(toRun);
}

export function countRuns(ctx: SqliteContext): Record<string, number> {
  const rows = ctx.stmt('SELECT status, count(*) AS n FROM runs GROUP BY status').all() as Array<{
    status: string;
    n: number;
  }>;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export function lastEventId(ctx: SqliteContext): number {
  const row = ctx.stmt('SELECT MAX(id) AS id FROM events').get() as { id: number | null };
  return row.id ?? 0;
}
