/** Reads of runs outside any transaction (they see what has committed): one run, a page, counts. */
import type { RunRecord } from '../records.ts';
import { type RunRow, toRun } from '../rows.ts';
import { renderRunQuery } from '../run-query.ts';
import type { RunQuery } from '../store.ts';
import type { PgContext } from './pg-context.ts';
import { select } from './sql.ts';

export async function getRun(ctx: PgContext, id: string): Promise<RunRecord | undefined> {
  const [row] = await ctx.read<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [id]);
  return row ? toRun(row) : undefined;
}

export async function listRuns(ctx: PgContext, q: RunQuery): Promise<RunRecord[]> {
  const { text, values } = renderRunQuery('postgres', ctx.t.runs, q);
  return (await ctx.read<RunRow>(text, values)).map(toRun);
}

export async function countRuns(ctx: PgContext): Promise<Record<string, number>> {
  const rows = await ctx.read<{ status: string; n: number }>(
    `SELECT status, count(*) AS n FROM ${ctx.t.runs} GROUP BY status`,
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function lastEventId(ctx: PgContext): Promise<number> {
  const rows = await ctx.read<{ id: string | null }>(`SELECT MAX(id) AS id FROM ${ctx.t.events}`, []);
  return Number(rows[0]?.id ?? 0);
}

/** One SELECT in a read-only transaction (a db_query reference), BIGINT read as numbers. */
export async function queryReadOnly(
  ctx: PgContext,
  text: string,
  values: unknown[],
): Promise<Record<string, unknown>[]> {
  const client = await ctx.pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN READ ONLY');
    const rows = await select<Record<string, unknown>>(client, text, values);
    await client.query('COMMIT');
    return rows;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: unknown) => {
      broken = e as Error;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
