/**
 * The page of runs `listRuns` answers, written once for both stores: which filters a `RunQuery`
 * sets and how the page is ordered and capped are policy; only placeholders and the JSON test differ
 * (dialect.ts).
 */
import { DIALECTS, type DialectName, type Statement } from './dialect.ts';
import type { RunQuery } from './store.ts';

/** A page is never larger than this, whatever the caller asks (a listing must not load the table). */
export const MAX_PAGE = 10_000;
const DEFAULT_PAGE = 100;

export function renderRunQuery(dialect: DialectName, runsTable: string, q: RunQuery): Statement {
  const d = DIALECTS[dialect];
  const values: unknown[] = [];
  const param = (value: unknown) => d.param(values.push(value));
  const where: string[] = [];
  if (q.parentId !== undefined) where.push(`parent_id = ${param(q.parentId)}`);
  else if (q.topLevel ?? true) where.push('parent_id IS NULL');
  if (q.status !== undefined) where.push(`status = ${param(q.status)}`);
  if (q.name !== undefined) where.push(`name = ${param(q.name)}`);
  if (q.waitReason !== undefined) where.push(`status = 'waiting' AND wait_reason = ${param(q.waitReason)}`);
  if (q.createdAfter !== undefined) where.push(`created_at >= ${param(q.createdAfter)}`);
  if (q.createdBefore !== undefined) where.push(`created_at < ${param(q.createdBefore)}`);
  if (q.scheduled === true) where.push(d.jsonHasKey('options', 'schedule'));
  if (q.beforeId !== undefined) where.push(`id < ${param(q.beforeId)}`);
  // A flow's steps read in creation order; top-level listings newest first (ids sort by time).
  const order = q.parentId !== undefined ? 'ORDER BY id' : 'ORDER BY id DESC';
  const limit = param(Math.min(Math.max(1, q.limit ?? DEFAULT_PAGE), MAX_PAGE));
  const filter = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  return { text: `SELECT * FROM ${runsTable}${filter} ${order} LIMIT ${limit}`, values };
}
