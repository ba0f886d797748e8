/**
 * What the SQLite and Postgres LangGraph tables share, as pure code: the row shapes both read,
 * their mapping to the store's records, the retention expiry, and the list query rendered for a
 * dialect (like run-rules.ts + dialect.ts do for runs); the other statements are in
 * langgraph-sql.ts. Each store keeps only how it executes.
 */
import type { Dialect } from './dialect.ts';
import type {
  GraphCheckpointKey,
  GraphCheckpointRow,
  GraphListQuery,
  GraphRetention,
  GraphThreadRecord,
  GraphWriteRow,
} from './langgraph-records.ts';

/** A checkpoint row as both drivers return it (Postgres BIGINTs may arrive as strings). */
export interface CheckpointSqlRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Buffer;
  metadata_type: string;
  metadata: Buffer;
  channel_versions: string;
  step: number | null;
  source: string | null;
  created_at: number | string;
}

export interface WriteSqlRow {
  task_id: string;
  task_path: string;
  idx: number;
  channel: string;
  type: string;
  value: Buffer;
}

export interface ThreadSqlRow {
  thread_id: string;
  created_at: number | string;
  updated_at: number | string;
  last_checkpoint_id: string | null;
  last_step: number | null;
  last_source: string | null;
  expires_at: number | string | null;
  checkpoints: number | string;
  writes: number | string;
}

export const CHECKPOINT_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata, channel_versions, step, source, created_at';

/** Both drivers bind a Buffer as a BLOB / BYTEA; a view over the same memory, no copy. */
export function blob(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The parameters of pending writes in the column order both stores insert them in (thread, ns,
 * checkpoint, task, idx, task path, channel, type, value), one write after another.
 */
export function writeRowValues(key: GraphCheckpointKey, writes: readonly GraphWriteRow[]): unknown[] {
  return writes.flatMap((w) => [
    key.threadId,
    key.ns,
    key.checkpointId,
    w.taskId,
    w.idx,
    w.taskPath,
    w.channel,
    w.type,
    blob(w.value),
  ]);
}

export function toCheckpointRow(r: CheckpointSqlRow): GraphCheckpointRow {
  return {
    threadId: r.thread_id,
    ns: r.checkpoint_ns,
    checkpointId: r.checkpoint_id,
    parentCheckpointId: r.parent_checkpoint_id,
    type: r.type,
    checkpoint: r.checkpoint,
    metadataType: r.metadata_type,
    metadata: r.metadata,
    channelVersions: JSON.parse(r.channel_versions) as Record<string, number | string>,
    step: r.step,
    source: r.source,
    createdAt: Number(r.created_at),
  };
}

export function toThreadRecord(r: ThreadSqlRow): GraphThreadRecord {
  return {
    threadId: r.thread_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    lastCheckpointId: r.last_checkpoint_id,
    lastStep: r.last_step,
    lastSource: r.last_source,
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    checkpoints: Number(r.checkpoints),
    writes: Number(r.writes),
  };
}

export function toWriteRow(w: WriteSqlRow): GraphWriteRow {
  return {
    taskId: w.task_id,
    taskPath: w.task_path,
    idx: w.idx,
    channel: w.channel,
    type: w.type,
    value: w.value,
  };
}

/** When a thread written now expires under the saver's retention (null: never). */
export function threadExpiry(now: number, retention: GraphRetention): number | null {
  return retention.ttlMs === undefined ? null : now + retention.ttlMs;
}

/**
 * `list`'s query: newest checkpoint id first (ids sort by time), ties broken by thread and
 * namespace so a page boundary (`after`) is exact.
 */
export function renderListCheckpoints(
  q: GraphListQuery,
  dialect: Dialect,
  table: string,
  /** Where checkpoints share their table with other rows (SQLite): which columns, which rows. */
  layout: { columns: string; where: string } = { columns: CHECKPOINT_COLUMNS, where: '' },
): { sql: string; params: unknown[] } {
  const where: string[] = layout.where ? [layout.where] : [];
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return dialect.param(params.length);
  };
  if (q.threadId !== undefined) where.push(`thread_id = ${p(q.threadId)}`);
  if (q.ns !== undefined) where.push(`checkpoint_ns = ${p(q.ns)}`);
  if (q.beforeId !== undefined) where.push(`checkpoint_id < ${p(q.beforeId)}`);
  if (q.after !== undefined)
    where.push(
      `(checkpoint_id, thread_id, checkpoint_ns) < (${p(q.after.checkpointId)}, ${p(q.after.threadId)}, ${p(q.after.ns)})`,
    );
  const limit = p(Math.max(1, Math.floor(q.limit)));
  return {
    sql: `SELECT ${layout.columns} FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ${limit}`,
    params,
  };
}
