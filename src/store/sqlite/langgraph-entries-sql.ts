/**
 * The statements of SQLite's LangGraph rows since migration 0026: checkpoints (kind 0), pending
 * writes (kind 1) and channel values (kind 2) in one table, `langgraph_entries`, so a step's rows
 * touch one rowid tree and two index leaves instead of three tables' six (see the migration). The
 * threads table and its statements are the ones Postgres shares (../langgraph-sql.ts); Postgres keeps
 * three tables, where a commit does not rewrite whole pages.
 *
 * The two indexes are partial: checkpoints and writes are keyed by `checkpoint_id IS NOT NULL`,
 * values by `version IS NOT NULL`, and every row is exactly one of the two (a CHECK). A statement
 * reaches a partial index only through a condition on its column, so every statement here names one
 * of them — a bare `thread_id = ?` would scan the table.
 */
import { DIALECTS } from '../dialect.ts';
import type { GraphBlobRow, GraphCheckpointRow } from '../langgraph-records.ts';
import { blob, writeRowValues } from '../langgraph-rules.ts';
import { threadStatements } from '../langgraph-sql.ts';

const E = 'langgraph_entries';
const THREADS = 'langgraph_threads';

/** A checkpoint row's columns, named as `CheckpointSqlRow` has them. */
export const ENTRY_CHECKPOINT_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, value AS checkpoint, metadata_type, metadata, channel_versions, step, source, created_at';
/** Checkpoints only, through the key index. */
export const CHECKPOINTS = 'checkpoint_id IS NOT NULL AND kind = 0';
const WRITES = 'checkpoint_id IS NOT NULL AND kind = 1';
const VALUES = 'version IS NOT NULL';
const KEY = '(thread_id, checkpoint_ns, checkpoint_id, kind, task_id, idx) WHERE checkpoint_id IS NOT NULL';

const ALL_COLUMNS =
  'thread_id, checkpoint_ns, kind, checkpoint_id, task_id, idx, task_path, channel, version, parent_checkpoint_id, step, source, created_at, type, metadata_type, metadata, channel_versions, value';
const CHECKPOINT_TUPLE = "(?, ?, 0, ?, '', 0, NULL, NULL, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const VALUE_TUPLE = '(?, ?, 2, NULL, NULL, NULL, NULL, ?, ?, NULL, NULL, NULL, NULL, ?, NULL, NULL, NULL, ?)';
const WRITE_TUPLE = '(?, ?, 1, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?, NULL, NULL, NULL, ?)';

const cached = (make: (rows: number) => string) => {
  const texts: string[] = [];
  return (rows: number) => (texts[rows] ??= make(rows));
};
const repeat = (tuple: string, rows: number) => Array.from({ length: rows }, () => tuple).join(', ');

const putText = cached(
  (
    values,
  ) => `INSERT INTO ${E} (${ALL_COLUMNS}) VALUES ${[CHECKPOINT_TUPLE, repeat(VALUE_TUPLE, values)].filter(Boolean).join(', ')}
   ON CONFLICT ${KEY} DO UPDATE SET
     parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type, value = excluded.value,
     metadata_type = excluded.metadata_type, metadata = excluded.metadata,
     channel_versions = excluded.channel_versions, step = excluded.step, source = excluded.source
   ON CONFLICT DO NOTHING`,
);
const writesText = (replace: boolean) =>
  cached(
    (rows) => `INSERT INTO ${E} (${ALL_COLUMNS}) VALUES ${repeat(WRITE_TUPLE, rows)}
   ON CONFLICT ${KEY} DO ${
     replace
       ? 'UPDATE SET task_path = excluded.task_path, channel = excluded.channel, type = excluded.type, value = excluded.value'
       : 'NOTHING'
   }`,
  );
const writesReplacing = writesText(true);
const writesOnce = writesText(false);

// The newest root checkpoint is read from the key index, not kept on the thread row (which would
// then be rewritten at every step).
const threadSelect = `SELECT t.thread_id, t.created_at, t.updated_at, t.expires_at,
  c.checkpoint_id AS last_checkpoint_id, c.step AS last_step, c.source AS last_source,
  (SELECT count(*) FROM ${E} k WHERE k.thread_id = t.thread_id AND k.${CHECKPOINTS}) AS checkpoints,
  (SELECT count(*) FROM ${E} w WHERE w.thread_id = t.thread_id AND w.${WRITES}) AS writes
  FROM ${THREADS} t LEFT JOIN ${E} c ON c.thread_id = t.thread_id AND c.checkpoint_ns = '' AND c.kind = 0
  AND c.checkpoint_id = (SELECT max(m.checkpoint_id) FROM ${E} m
    WHERE m.thread_id = t.thread_id AND m.checkpoint_ns = '' AND m.${CHECKPOINTS})`;

export const ENTRY_SQL = {
  ...threadStatements(DIALECTS.sqlite, THREADS),
  /**
   * A put in one statement: the checkpoint (an upsert: put again, it is replaced) and the values of
   * the channels it changed (a (channel, version) holds one value; a checkpoint put again must not
   * change what others read). Up to ROWS_PER_INSERT values.
   */
  putCheckpoint: {
    text: putText,
    values: (
      row: Omit<GraphCheckpointRow, 'createdAt'>,
      versions: string,
      now: number,
      values: readonly GraphBlobRow[],
    ): unknown[] => {
      const out: unknown[] = [
        row.threadId,
        row.ns,
        row.checkpointId,
        row.parentCheckpointId,
        row.step,
        row.source,
        now,
        row.type,
        row.metadataType,
        blob(row.metadata),
        versions,
        blob(row.checkpoint),
      ];
      for (const v of values) out.push(row.threadId, row.ns, v.channel, v.version, v.type, blob(v.value));
      return out;
    },
  },
  /** Values beyond the first ROWS_PER_INSERT of a put. */
  insertValues: {
    text: cached(
      (rows) =>
        `INSERT INTO ${E} (${ALL_COLUMNS}) VALUES ${repeat(VALUE_TUPLE, rows)} ON CONFLICT DO NOTHING`,
    ),
    values: (key: { threadId: string; ns: string }, values: readonly GraphBlobRow[]): unknown[] =>
      values.flatMap((v) => [key.threadId, key.ns, v.channel, v.version, v.type, blob(v.value)]),
  },
  /** Special writes (errors, interrupts) replace an earlier one; regular writes are kept once. */
  insertWrites: {
    text: (rows: number, replace: boolean) => (replace ? writesReplacing(rows) : writesOnce(rows)),
    values: writeRowValues,
  },
  /** (threadId, ns) */
  latestCheckpoint: `SELECT ${ENTRY_CHECKPOINT_COLUMNS} FROM ${E}
     WHERE thread_id = ? AND checkpoint_ns = ? AND ${CHECKPOINTS} ORDER BY checkpoint_id DESC LIMIT 1`,
  /** (threadId, ns, checkpointId) */
  checkpointById: `SELECT ${ENTRY_CHECKPOINT_COLUMNS} FROM ${E}
     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND kind = 0`,
  /**
   * (channel_versions, threadId, ns): the values a checkpoint reads, each found by its whole key (CROSS
   * JOIN keeps json_each outside; the planner would otherwise walk every value of the namespace).
   */
  valuesOf: `SELECT e.channel, e.version, e.type, e.value FROM json_each(?) j CROSS JOIN ${E} e
     ON e.thread_id = ? AND e.checkpoint_ns = ? AND e.version = CAST(j.value AS TEXT) AND e.channel = j.key`,
  /** (threadId, ns, checkpointId) */
  writesOf: `SELECT task_id, task_path, idx, channel, type, value FROM ${E}
     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND kind = 1`,
  /** (threadId) */
  hasCheckpoints: `SELECT 1 FROM ${E} WHERE thread_id = ? AND ${CHECKPOINTS} LIMIT 1`,
  /**
   * (target, now, source, target, source): every row of a thread under another id, checkpoints
   * created now. Two SELECTs, one per index (see the top of this file).
   */
  copyEntries: `INSERT INTO ${E} (${ALL_COLUMNS})
     SELECT ?, checkpoint_ns, kind, checkpoint_id, task_id, idx, task_path, channel, version,
       parent_checkpoint_id, step, source, CASE kind WHEN 0 THEN ? ELSE created_at END, type, metadata_type,
       metadata, channel_versions, value
     FROM ${E} WHERE thread_id = ? AND checkpoint_id IS NOT NULL
     UNION ALL
     SELECT ?, checkpoint_ns, kind, checkpoint_id, task_id, idx, task_path, channel, version,
       parent_checkpoint_id, step, source, created_at, type, metadata_type, metadata, channel_versions, value
     FROM ${E} WHERE thread_id = ? AND ${VALUES}`,
  /** (threadId): keep-latest over every namespace of a thread. */
  pruneCheckpoints: `DELETE FROM ${E} AS c WHERE thread_id = ? AND ${CHECKPOINTS} AND checkpoint_id < (
     SELECT max(k.checkpoint_id) FROM ${E} k
     WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns AND k.${CHECKPOINTS})`,
  /** (threadId): the writes whose checkpoint is gone. */
  pruneWrites: `DELETE FROM ${E} AS w WHERE thread_id = ? AND ${WRITES} AND NOT EXISTS (
     SELECT 1 FROM ${E} k WHERE k.thread_id = w.thread_id AND k.checkpoint_ns = w.checkpoint_ns
     AND k.checkpoint_id = w.checkpoint_id AND k.kind = 0)`,
  /** (threadId) */
  valueNamespaces: `SELECT DISTINCT checkpoint_ns FROM ${E} WHERE thread_id = ? AND ${VALUES}`,
  /** (limit) */
  listThreads: `${threadSelect} ORDER BY t.updated_at DESC, t.thread_id LIMIT ?`,
  /** (threadId) */
  getThread: `${threadSelect} WHERE t.thread_id = ?`,
  /** (threadId, ns, keep - 1): the id of the oldest checkpoint keep-latest keeps. */
  oldestKept: `SELECT checkpoint_id FROM ${E} WHERE thread_id = ? AND checkpoint_ns = ? AND ${CHECKPOINTS}
     ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?`,
  /** (threadId, ns, checkpointId): the checkpoints before one, and their writes. */
  entriesBefore: `DELETE FROM ${E} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?`,
  /** (threadId, ns, threadId, ns): the values no remaining checkpoint of the namespace reads. */
  collectValues: `DELETE FROM ${E} WHERE thread_id = ? AND checkpoint_ns = ? AND ${VALUES}
     AND (channel, version) NOT IN (
       SELECT j.key, CAST(j.value AS TEXT) FROM ${E} c, json_each(c.channel_versions) j
       WHERE c.thread_id = ? AND c.checkpoint_ns = ? AND c.${CHECKPOINTS})`,
  /** (threadId) each: the rows under each index, then the thread. */
  deleteThread: [
    `DELETE FROM ${E} WHERE thread_id = ? AND checkpoint_id IS NOT NULL`,
    `DELETE FROM ${E} WHERE thread_id = ? AND ${VALUES}`,
    `DELETE FROM ${THREADS} WHERE thread_id = ?`,
  ],
};
