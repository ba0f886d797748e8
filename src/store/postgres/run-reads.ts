/** Reads of runs outside any transaction (they see what has committed): one run, a page, counts. */
import type { RunRecord } from '../records.ts';
import { type RunRow, toRun } from '../rows.ts';
import type { RunQuery } from '../store.ts';
import type { PgContext } from './pg-context.ts';
import { select } from './sql.ts';

export async function getRun(ctx: PgContext, id: string): Promise<RunRecord | undefined> {
  const [row] = await ctx.read<RunRow>(`SELECT * FROM ${ctx.t.runs} WHERE id = $1`, [id]);
  return row ? toRun(row) : undefined;
}

export async function listRuns(ctx: PgContext, q: RunQuery): Promise<RunRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (q.parentId !== undefined) where.push(`parent_id = ${param(q.parentId)}`);
  else if (q.topLevel ?? true) where.push('parent_id IS NULL');
  if (q.status !== undefined) where.push(`status = ${param(q.status)}`);
  if (q.name !== undefined) where.push(`name = ${param(q.name)}`);
  if (q.waitReason !== undefined) where.push(`status = 'waiting' AND wait_reason = ${param(q.waitReason)}`);
  if (q.createdAfter !== undefined) where.push(`created_at >= ${param(q.createdAfter)}`);
  if (q.createdBefore !== undefined) where.push(`created_at < ${param(q.createdBefore)}`);
  if (q.scheduled === true) where.push(`(options::jsonb -> 'schedule') IS NOT NULL`);
  if (q.beforeId !== undefined) where.push(`id < ${param(q.beforeId)}`);
  const order = q.parentId !== undefined ? 'ORDER BY id' : 'ORDER BY id DESC';
  const limit = param(Math.min(Math.max(1, q.limit ?? 100), 10_000));
  const rows = await ctx.read<RunRow>(
    `SELECT * FROM ${ctx.t.runs} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${order} LIMIT ${limit}`,
    params,
  );
  return rows.map(toRun);
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
