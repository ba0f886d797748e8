/**
 * LangGraph.js checkpoints in the SQLite store (migration 0018). Writes go through the store's
 * write queue, so a checkpoint and the writes LangGraph issues in the same turn share one commit
 * and one fsync; each put or putWrites is its own savepoint, so it lands whole or not at all.
 */
import { BatonError } from '../../core/index.ts';
import { DIALECTS } from '../dialect.ts';
import type {
  GraphBlobRow,
  GraphCheckpointKey,
  GraphCheckpointRow,
  GraphCheckpointStore,
  GraphCheckpointWithWrites,
  GraphListQuery,
  GraphRetention,
  GraphThreadRecord,
  GraphWriteRow,
} from '../langgraph-records.ts';
import {
  blob,
  CHECKPOINT_COLUMNS,
  type CheckpointSqlRow,
  threadExpiry as expiry,
  renderListCheckpoints,
  type ThreadSqlRow,
  toCheckpointRow as toRow,
  toThreadRecord as toThread,
  toWriteRow,
  type WriteSqlRow,
} from '../langgraph-rules.ts';
import type { SqliteContext } from './sqlite-context.ts';

/** The blobs a namespace's checkpoints still read; everything else in it is garbage. */
const BLOBS_IN_USE = `SELECT j.key, CAST(j.value AS TEXT) FROM langgraph_checkpoints c, json_each(c.channel_versions) j
  WHERE c.thread_id = ? AND c.checkpoint_ns = ?`;

const THREAD_SELECT = `SELECT t.*,
  (SELECT count(*) FROM langgraph_checkpoints c WHERE c.thread_id = t.thread_id) AS checkpoints,
  (SELECT count(*) FROM langgraph_writes w WHERE w.thread_id = t.thread_id) AS writes
  FROM langgraph_threads t`;

export class SqliteGraphCheckpoints implements GraphCheckpointStore {
  constructor(
    private readonly ctx: SqliteContext,
    private readonly guard: () => void,
  ) {}

  now(): number {
    return this.ctx.now();
  }

  putCheckpoint(
    row: Omit<GraphCheckpointRow, 'createdAt'>,
    blobs: readonly GraphBlobRow[],
    retention: GraphRetention,
  ): Promise<void> {
    this.guard();
    const versions = JSON.stringify(row.channelVersions);
    return this.ctx.write(() => {
      const now = this.ctx.now();
      if (blobs.length > 0) {
        // A (channel, version) holds one value; a checkpoint put again must not change what others read.
        const insertBlob = this.ctx.stmt(
          `INSERT INTO langgraph_blobs (thread_id, checkpoint_ns, channel, version, type, value) VALUES (?,?,?,?,?,?)
           ON CONFLICT DO NOTHING`,
        );
        for (const b of blobs)
          insertBlob.run(row.threadId, row.ns, b.channel, b.version, b.type, blob(b.value));
      }
      this.ctx
        .stmt(
          // An upsert, not INSERT OR REPLACE: OR REPLACE/IGNORE also swallow NOT NULL violations.
          `INSERT INTO langgraph_checkpoints (${CHECKPOINT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
           ON CONFLICT DO UPDATE SET parent_checkpoint_id = excluded.parent_checkpoint_id, type = excluded.type,
             checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type, metadata = excluded.metadata,
             channel_versions = excluded.channel_versions, step = excluded.step, source = excluded.source`,
        )
        .run(
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
        );
      if (row.ns === '')
        this.ctx
          .stmt(
            `INSERT INTO langgraph_threads (thread_id, created_at, updated_at, last_checkpoint_id, last_step, last_source, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at, expires_at = excluded.expires_at,
               last_step = CASE WHEN last_checkpoint_id IS NULL OR excluded.last_checkpoint_id >= last_checkpoint_id THEN excluded.last_step ELSE last_step END,
               last_source = CASE WHEN last_checkpoint_id IS NULL OR excluded.last_checkpoint_id >= last_checkpoint_id THEN excluded.last_source ELSE last_source END,
               last_checkpoint_id = max(coalesce(last_checkpoint_id, ''), excluded.last_checkpoint_id)`,
          )
          .run(row.threadId, now, now, row.checkpointId, row.step, row.source, expiry(now, retention));
      else this.touchThread(row.threadId, now, retention);
      if (retention.keepLatest !== undefined) this.keepLatest(row.threadId, row.ns, retention.keepLatest);
    });
  }

  putWrites(
    key: GraphCheckpointKey,
    writes: readonly GraphWriteRow[],
    replace: boolean,
    retention: GraphRetention,
  ): Promise<void> {
    this.guard();
    return this.ctx.write(() => {
      const insert = this.ctx.stmt(
        `INSERT INTO langgraph_writes
         (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value) VALUES (?,?,?,?,?,?,?,?,?)
         ON CONFLICT DO ${replace ? 'UPDATE SET task_path = excluded.task_path, channel = excluded.channel, type = excluded.type, value = excluded.value' : 'NOTHING'}`,
      );
      for (const w of writes)
        insert.run(
          key.threadId,
          key.ns,
          key.checkpointId,
          w.taskId,
          w.idx,
          w.taskPath,
          w.channel,
          w.type,
          blob(w.value),
        );
      this.touchThread(key.threadId, this.ctx.now(), retention);
    });
  }

  async getCheckpoint(
    threadId: string,
    ns: string,
    checkpointId?: string,
  ): Promise<GraphCheckpointWithWrites | undefined> {
    this.guard();
    const r = (
      checkpointId === undefined
        ? this.ctx
            .stmt(
              `SELECT ${CHECKPOINT_COLUMNS} FROM langgraph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1`,
            )
            .get(threadId, ns)
        : this.ctx
            .stmt(
              `SELECT ${CHECKPOINT_COLUMNS} FROM langgraph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`,
            )
            .get(threadId, ns, checkpointId)
    ) as CheckpointSqlRow | undefined;
    if (!r) return undefined;
    return this.withWrites(r);
  }

  async listCheckpoints(q: GraphListQuery): Promise<GraphCheckpointWithWrites[]> {
    this.guard();
    const { sql, params } = renderListCheckpoints(q, DIALECTS.sqlite, 'langgraph_checkpoints');
    const rows = this.ctx.stmt(sql).all(...params) as CheckpointSqlRow[];
    return rows.map((r) => this.withWrites(r));
  }

  deleteThread(threadId: string): Promise<void> {
    this.guard();
    return this.ctx.write(() => this.deleteThreadNow(threadId));
  }

  copyThread(sourceThreadId: string, targetThreadId: string, retention: GraphRetention): Promise<void> {
    this.guard();
    return this.ctx.write(() => {
      const has = this.ctx.stmt('SELECT 1 FROM langgraph_checkpoints WHERE thread_id = ? LIMIT 1');
      if (!has.get(sourceThreadId))
        throw new BatonError('THREAD_NOT_FOUND', `no LangGraph thread ${sourceThreadId} to copy`, {
          data: { threadId: sourceThreadId },
        });
      if (
        has.get(targetThreadId) ||
        this.ctx.stmt('SELECT 1 FROM langgraph_threads WHERE thread_id = ?').get(targetThreadId)
      )
        throw new BatonError(
          'THREAD_EXISTS',
          `cannot copy ${sourceThreadId} to ${targetThreadId}: thread ${targetThreadId} already exists (delete it first)`,
          { data: { threadId: targetThreadId } },
        );
      const now = this.ctx.now();
      this.ctx
        .stmt(
          `INSERT INTO langgraph_checkpoints (${CHECKPOINT_COLUMNS})
           SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata, channel_versions, step, source, ?
           FROM langgraph_checkpoints WHERE thread_id = ?`,
        )
        .run(targetThreadId, now, sourceThreadId);
      this.ctx
        .stmt(
          `INSERT INTO langgraph_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value)
           SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value
           FROM langgraph_writes WHERE thread_id = ?`,
        )
        .run(targetThreadId, sourceThreadId);
      this.ctx
        .stmt(
          `INSERT INTO langgraph_blobs (thread_id, checkpoint_ns, channel, version, type, value)
           SELECT ?, checkpoint_ns, channel, version, type, value FROM langgraph_blobs WHERE thread_id = ?`,
        )
        .run(targetThreadId, sourceThreadId);
      this.ctx
        .stmt(
          `INSERT INTO langgraph_threads (thread_id, created_at, updated_at, last_checkpoint_id, last_step, last_source, expires_at)
           SELECT ?, ?, ?, last_checkpoint_id, last_step, last_source, ? FROM langgraph_threads WHERE thread_id = ?`,
        )
        .run(targetThreadId, now, now, expiry(now, retention), sourceThreadId);
    });
  }

  prune(threadIds: readonly string[], strategy: 'keep_latest' | 'delete'): Promise<void> {
    this.guard();
    return this.ctx.write(() => {
      for (const id of threadIds) {
        if (strategy === 'delete') {
          this.deleteThreadNow(id);
          continue;
        }
        this.ctx
          .stmt(
            `DELETE FROM langgraph_checkpoints WHERE thread_id = ? AND checkpoint_id < (
               SELECT max(k.checkpoint_id) FROM langgraph_checkpoints k
               WHERE k.thread_id = langgraph_checkpoints.thread_id AND k.checkpoint_ns = langgraph_checkpoints.checkpoint_ns)`,
          )
          .run(id);
        this.ctx
          .stmt(
            `DELETE FROM langgraph_writes WHERE thread_id = ? AND NOT EXISTS (
               SELECT 1 FROM langgraph_checkpoints k WHERE k.thread_id = langgraph_writes.thread_id
               AND k.checkpoint_ns = langgraph_writes.checkpoint_ns AND k.checkpoint_id = langgraph_writes.checkpoint_id)`,
          )
          .run(id);
        const namespaces = this.ctx
          .stmt('SELECT DISTINCT checkpoint_ns FROM langgraph_blobs WHERE thread_id = ?')
          .pluck()
          .all(id) as string[];
        for (const ns of namespaces) this.collectBlobs(id, ns);
      }
    });
  }

  sweepThreads(limit = 500): Promise<number> {
    this.guard();
    return this.ctx.write(() => {
      const due = this.ctx
        .stmt(
          'SELECT thread_id FROM langgraph_threads WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?',
        )
        .all(this.ctx.now(), limit) as Array<{ thread_id: string }>;
      for (const t of due) this.deleteThreadNow(t.thread_id);
      return due.length;
    });
  }

  async listThreads(limit: number): Promise<GraphThreadRecord[]> {
    this.guard();
    const rows = this.ctx
      .stmt(`${THREAD_SELECT} ORDER BY t.updated_at DESC, t.thread_id LIMIT ?`)
      .all(Math.max(1, Math.floor(limit))) as ThreadSqlRow[];
    return rows.map(toThread);
  }

  async getThread(threadId: string): Promise<GraphThreadRecord | undefined> {
    this.guard();
    const row = this.ctx.stmt(`${THREAD_SELECT} WHERE t.thread_id = ?`).get(threadId) as
      | ThreadSqlRow
      | undefined;
    return row ? toThread(row) : undefined;
  }

  private withWrites(r: CheckpointSqlRow): GraphCheckpointWithWrites {
    const blobs = this.ctx
      .stmt(
        `SELECT b.channel, b.version, b.type, b.value FROM json_each(?) j JOIN langgraph_blobs b
         ON b.thread_id = ? AND b.checkpoint_ns = ? AND b.channel = j.key AND b.version = CAST(j.value AS TEXT)`,
      )
      .all(r.channel_versions, r.thread_id, r.checkpoint_ns) as GraphBlobRow[];
    return { row: toRow(r), blobs, writes: this.writesOf(r) };
  }

  private writesOf(r: CheckpointSqlRow): GraphWriteRow[] {
    const rows = this.ctx
      .stmt(
        'SELECT task_id, task_path, idx, channel, type, value FROM langgraph_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?',
      )
      .all(r.thread_id, r.checkpoint_ns, r.checkpoint_id) as WriteSqlRow[];
    return rows.map(toWriteRow);
  }

  private touchThread(threadId: string, now: number, retention: GraphRetention): void {
    this.ctx
      .stmt(
        `INSERT INTO langgraph_threads (thread_id, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      )
      .run(threadId, now, now, expiry(now, retention));
  }

  /** Drops checkpoints older than the newest `keep` of a namespace, with their writes. */
  private keepLatest(threadId: string, ns: string, keep: number): void {
    const oldestKept = this.ctx
      .stmt(
        'SELECT checkpoint_id FROM langgraph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?',
      )
      .pluck()
      .get(threadId, ns, keep - 1) as string | undefined;
    if (oldestKept === undefined) return;
    const dropped = this.ctx
      .stmt(
        'DELETE FROM langgraph_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?',
      )
      .run(threadId, ns, oldestKept).changes;
    if (dropped === 0) return;
    this.ctx
      .stmt('DELETE FROM langgraph_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?')
      .run(threadId, ns, oldestKept);
    this.collectBlobs(threadId, ns);
  }

  /** Deletes the channel values no remaining checkpoint of the namespace reads. */
  private collectBlobs(threadId: string, ns: string): void {
    this.ctx
      .stmt(
        `DELETE FROM langgraph_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND (channel, version) NOT IN (${BLOBS_IN_USE})`,
      )
      .run(threadId, ns, threadId, ns);
  }

  private deleteThreadNow(threadId: string): void {
    this.ctx.stmt('DELETE FROM langgraph_blobs WHERE thread_id = ?').run(threadId);
    this.ctx.stmt('DELETE FROM langgraph_writes WHERE thread_id = ?').run(threadId);
    this.ctx.stmt('DELETE FROM langgraph_checkpoints WHERE thread_id = ?').run(threadId);
    this.ctx.stmt('DELETE FROM langgraph_threads WHERE thread_id = ?').run(threadId);
  }
}
