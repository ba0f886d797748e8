/**
 * Every statement of the LangGraph tables, written once and rendered for a dialect (review finding
 * D1: the SQLite and Postgres stores each carried their own copy). A statement is its text and the
 * order of its values, so a store only executes: SQLite with `stmt(text).run(...values)`, Postgres
 * with `tx.execute(text, values)` inside its write queue. Parameters are numbered in order of
 * appearance; a value used twice is passed twice. Since SQLite migration 0026 only the threads'
 * statements (threadStatements) are shared: SQLite keeps checkpoints, writes and values in one table
 * (sqlite/langgraph-entries-sql.ts), Postgres in the three `graphStatements` renders.
 */
import type { Dialect } from './dialect.ts';
import type { GraphBlobRow, GraphCheckpointRow, GraphWriteRow } from './langgraph-records.ts';
import { blob, CHECKPOINT_COLUMNS, writeRowValues } from './langgraph-rules.ts';

/** The four tables' names as a store writes them (Postgres qualifies them with its schema). */
export interface GraphTableNames {
  threads: string;
  checkpoints: string;
  writes: string;
  blobs: string;
}

const WRITE_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value';
const BLOB_COLUMNS = 'thread_id, checkpoint_ns, channel, version, type, value';
const THREAD_COLUMNS = 'thread_id, created_at, updated_at, expires_at';

/**
 * A thread row is rewritten (a page of the database per step) only when its sliding expiry or
 * `updated_at` would move by this much, or its expiry would come sooner: both are then at most this
 * much behind the last write, so a thread may expire up to THREAD_REFRESH_MS before its exact TTL.
 */
export const THREAD_REFRESH_MS = 1_000;

/** Rows per multi-row INSERT (a statement is prepared once per row count up to this). */
export const ROWS_PER_INSERT = 32;

/**
 * The statements of the threads table alone: the same in both layouts of the other rows (SQLite
 * keeps checkpoints, writes and values in one table since migration 0026, Postgres in three).
 */
export function threadStatements(d: Dialect, threads: string) {
  const params = (n: number, from = 1) => Array.from({ length: n }, (_, i) => d.param(from + i)).join(', ');
  const p = d.param;
  return {
    /**
     * Every put and putWrites: the thread exists and its sliding expiry moves — written only when it
     * moves by THREAD_REFRESH_MS, comes sooner (a shorter TTL) or appears or goes (see above).
     */
    touchThread: {
      text: `INSERT INTO ${threads} AS t (${THREAD_COLUMNS}) VALUES (${params(4)})
       ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at, expires_at = excluded.expires_at
       WHERE excluded.updated_at >= t.updated_at + ${THREAD_REFRESH_MS}
         OR (excluded.expires_at IS NULL) <> (t.expires_at IS NULL) OR excluded.expires_at < t.expires_at`,
      values: (threadId: string, now: number, expiresAt: number | null) => [threadId, now, now, expiresAt],
    },
    /** (threadId) */
    hasThread: `SELECT 1 FROM ${threads} WHERE thread_id = ${p(1)}`,
    /** (target, now, now, expiresAt, source) */
    copyThread: `INSERT INTO ${threads} (${THREAD_COLUMNS})
       SELECT ${params(4)} FROM ${threads} WHERE thread_id = ${p(5)}`,
    /** (now, limit) */
    dueThreads: `SELECT thread_id FROM ${threads} WHERE expires_at IS NOT NULL AND expires_at <= ${p(1)} LIMIT ${p(2)}`,
  };
}

/** The statements of the LangGraph tables for one dialect and one set of table names. */
export function graphStatements(d: Dialect, t: GraphTableNames) {
  /** `n` placeholders from the `from`-th. */
  const params = (n: number, from = 1) => Array.from({ length: n }, (_, i) => d.param(from + i)).join(', ');
  const p = d.param;
  /** `rows` tuples of `columns` placeholders, numbered in order. */
  const tuples = (rows: number, columns: number) =>
    Array.from({ length: rows }, (_, r) => `(${params(columns, r * columns + 1)})`).join(', ');
  // The newest root checkpoint is read from the checkpoints' primary key, not kept on the thread row
  // (which would then be rewritten at every step).
  const threadSelect = `SELECT t.thread_id, t.created_at, t.updated_at, t.expires_at,
  c.checkpoint_id AS last_checkpoint_id, c.step AS last_step, c.source AS last_source,
  (SELECT count(*) FROM ${t.checkpoints} k WHERE k.thread_id = t.thread_id) AS checkpoints,
  (SELECT count(*) FROM ${t.writes} w WHERE w.thread_id = t.thread_id) AS writes
  FROM ${t.threads} t LEFT JOIN ${t.checkpoints} c ON c.thread_id = t.thread_id AND c.checkpoint_ns = ''
  AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM ${t.checkpoints} m
    WHERE m.thread_id = t.thread_id AND m.checkpoint_ns = '')`;
  const insertWrites = (rows: number, replace: boolean) =>
    `INSERT INTO ${t.writes} (${WRITE_COLUMNS}) VALUES ${tuples(rows, 9)}
     ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO ${
       replace
         ? 'UPDATE SET task_path = excluded.task_path, channel = excluded.channel, type = excluded.type, value = excluded.value'
         : 'NOTHING'
     }`;
  const cached = (make: (rows: number) => string) => {
    const texts: string[] = [];
    return (rows: number) => (texts[rows] ??= make(rows));
  };
  const writesReplacing = cached((rows) => insertWrites(rows, true));
  const writesOnce = cached((rows) => insertWrites(rows, false));
  return {
    ...threadStatements(d, t.threads),
    // A (channel, version) holds one value; a checkpoint put again must not change what others read.
    /** Up to ROWS_PER_INSERT blobs in one statement. */
    insertBlobs: {
      text: cached(
        (rows) => `INSERT INTO ${t.blobs} (${BLOB_COLUMNS}) VALUES ${tuples(rows, 6)} ON CONFLICT DO NOTHING`,
      ),
      values: (key: { threadId: string; ns: string }, blobs: readonly GraphBlobRow[]) =>
        blobs.flatMap((b) => [key.threadId, key.ns, b.channel, b.version, b.type, blob(b.value)]),
    },
    // An upsert, not INSERT OR REPLACE: OR REPLACE/IGNORE also swallow NOT NULL violations.
    upsertCheckpoint: {
      text: `INSERT INTO ${t.checkpoints} (${CHECKPOINT_COLUMNS}) VALUES (${params(12)})
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
         parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type, checkpoint = excluded.checkpoint,
         metadata_type = excluded.metadata_type, metadata = excluded.metadata,
         channel_versions = excluded.channel_versions, step = excluded.step, source = excluded.source`,
      values: (row: Omit<GraphCheckpointRow, 'createdAt'>, versions: string, now: number) => [
        row.threadId,
        row.ns,
        row.checkpointId,
        row.parentCheckpointId,
        row.type,
        blob(row.checkpoint),
        row.metadataType,
        blob(row.metadata),
        versions,
        row.step,
        row.source,
        now,
      ],
    },
    insertWrites: {
      /**
       * Up to ROWS_PER_INSERT writes in one statement. Special writes (errors, interrupts) replace an
       * earlier one; regular writes are kept once.
       */
      text: (rows: number, replace: boolean) => (replace ? writesReplacing(rows) : writesOnce(rows)),
      values: writeRowValues,
    },
    /** (threadId, ns) */
    latestCheckpoint: `SELECT ${CHECKPOINT_COLUMNS} FROM ${t.checkpoints} WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)}
       ORDER BY checkpoint_id DESC LIMIT 1`,
    /** (threadId, ns, checkpointId) */
    checkpointById: `SELECT ${CHECKPOINT_COLUMNS} FROM ${t.checkpoints}
       WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)} AND checkpoint_id = ${p(3)}`,
    /** (channel_versions, threadId, ns): the values a checkpoint reads. */
    blobsOf: `SELECT b.channel, b.version, b.type, b.value FROM ${d.jsonEach(p(1))} j JOIN ${t.blobs} b
       ON b.thread_id = ${p(2)} AND b.checkpoint_ns = ${p(3)} AND b.channel = j.key AND b.version = ${d.jsonText('j.value')}`,
    /** (threadId, ns, checkpointId) */
    writesOf: `SELECT task_id, task_path, idx, channel, type, value FROM ${t.writes}
       WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)} AND checkpoint_id = ${p(3)}`,
    /** (threadId) */
    hasCheckpoints: `SELECT 1 FROM ${t.checkpoints} WHERE thread_id = ${p(1)} LIMIT 1`,
    /** (target, now, source) */
    copyCheckpoints: `INSERT INTO ${t.checkpoints} (${CHECKPOINT_COLUMNS})
       SELECT ${p(1)}, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata,
         channel_versions, step, source, ${p(2)}
       FROM ${t.checkpoints} WHERE thread_id = ${p(3)}`,
    /** (target, source) */
    copyWrites: `INSERT INTO ${t.writes} (${WRITE_COLUMNS})
       SELECT ${p(1)}, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value
       FROM ${t.writes} WHERE thread_id = ${p(2)}`,
    /** (target, source) */
    copyBlobs: `INSERT INTO ${t.blobs} (${BLOB_COLUMNS})
       SELECT ${p(1)}, checkpoint_ns, channel, version, type, value FROM ${t.blobs} WHERE thread_id = ${p(2)}`,
    /** (threadId): keep-latest over every namespace of a thread. */
    pruneCheckpoints: `DELETE FROM ${t.checkpoints} AS c WHERE thread_id = ${p(1)} AND checkpoint_id < (
       SELECT max(k.checkpoint_id) FROM ${t.checkpoints} k
       WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns)`,
    /** (threadId): the writes whose checkpoint is gone. */
    pruneWrites: `DELETE FROM ${t.writes} AS w WHERE thread_id = ${p(1)} AND NOT EXISTS (
       SELECT 1 FROM ${t.checkpoints} k WHERE k.thread_id = w.thread_id
       AND k.checkpoint_ns = w.checkpoint_ns AND k.checkpoint_id = w.checkpoint_id)`,
    /** (threadId) */
    blobNamespaces: `SELECT DISTINCT checkpoint_ns FROM ${t.blobs} WHERE thread_id = ${p(1)}`,
    /** (limit) */
    listThreads: `${threadSelect} ORDER BY t.updated_at DESC, t.thread_id LIMIT ${p(1)}`,
    /** (threadId) */
    getThread: `${threadSelect} WHERE t.thread_id = ${p(1)}`,
    /** (threadId, ns, keep - 1): the id of the oldest checkpoint keep-latest keeps. */
    oldestKept: `SELECT checkpoint_id FROM ${t.checkpoints} WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)}
       ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ${p(3)}`,
    /** (threadId, ns, checkpointId) */
    checkpointsBefore: `DELETE FROM ${t.checkpoints} WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)} AND checkpoint_id < ${p(3)}`,
    /** (threadId, ns, checkpointId) */
    writesBefore: `DELETE FROM ${t.writes} WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)} AND checkpoint_id < ${p(3)}`,
    /** (threadId, ns, threadId, ns): the values no remaining checkpoint of the namespace reads. */
    collectBlobs: `DELETE FROM ${t.blobs} WHERE thread_id = ${p(1)} AND checkpoint_ns = ${p(2)} AND (channel, version) NOT IN (
       SELECT j.key, ${d.jsonText('j.value')} FROM ${t.checkpoints} c, ${d.jsonEach('c.channel_versions')} j
       WHERE c.thread_id = ${p(3)} AND c.checkpoint_ns = ${p(4)})`,
    /** (threadId) per table, children first. */
    deleteThread: [t.blobs, t.writes, t.checkpoints, t.threads].map(
      (table) => `DELETE FROM ${table} WHERE thread_id = ${p(1)}`,
    ),
  };
}

/** `rows` in chunks of at most ROWS_PER_INSERT (one multi-row INSERT each). */
export function insertChunks<T>(rows: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) chunks.push(rows.slice(i, i + ROWS_PER_INSERT));
  return chunks;
}

/**
 * Writes that replace (errors, interrupts) as one statement may hold each (task, idx) once: the last
 * one given wins, as it did when each was written in turn (Postgres refuses to update a row twice in
 * one statement).
 */
export function lastPerIndex(writes: readonly GraphWriteRow[]): GraphWriteRow[] {
  const last = new Map<string, GraphWriteRow>();
  for (const w of writes) {
    const key = `${w.taskId}\u0000${w.idx}`;
    last.delete(key);
    last.set(key, w);
  }
  return [...last.values()];
}
