/**
 * LangGraph.js checkpoints in the Postgres store (migration 0015), the same contract as the SQLite
 * tables: every operation is one write of the store's queue (its own savepoint in a grouped
 * transaction), names its schema, and sorts ids by byte order.
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
  type CheckpointSqlRow,
  CHECKPOINT_COLUMNS as COLUMNS,
  threadExpiry as expiry,
  renderListCheckpoints,
  type ThreadSqlRow,
  toCheckpointRow as toRow,
  toThreadRecord as toThread,
  toWriteRow,
  type WriteSqlRow,
} from '../langgraph-rules.ts';
import type { PgContext } from './pg-context.ts';
import { quoteIdent } from './sql.ts';
import type { Tx } from './write-queue.ts';

export class PgGraphCheckpoints implements GraphCheckpointStore {
  private readonly threads: string;
  private readonly checkpoints: string;
  private readonly writes: string;
  private readonly blobs: string;

  constructor(
    private readonly ctx: PgContext,
    /** Waits for the store's migrations and refuses work after close. */
    private readonly op: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {
    const q = (t: string) => `${quoteIdent(ctx.t.schema)}.${t}`;
    this.threads = q('langgraph_threads');
    this.checkpoints = q('langgraph_checkpoints');
    this.writes = q('langgraph_writes');
    this.blobs = q('langgraph_blobs');
  }

  now(): number {
    return this.ctx.now();
  }

  putCheckpoint(
    row: Omit<GraphCheckpointRow, 'createdAt'>,
    blobs: readonly GraphBlobRow[],
    retention: GraphRetention,
  ): Promise<void> {
    const versions = JSON.stringify(row.channelVersions);
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const now = this.ctx.now();
        for (const b of blobs)
          await tx.execute(
            `INSERT INTO ${this.blobs} (thread_id, checkpoint_ns, channel, version, type, value) VALUES ($1,$2,$3,$4,$5,$6)
             ON CONFLICT DO NOTHING`,
            [row.threadId, row.ns, b.channel, b.version, b.type, blob(b.value)],
          );
        await tx.execute(
          `INSERT INTO ${this.checkpoints} (${COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
           ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
             parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, checkpoint = EXCLUDED.checkpoint,
             metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata,
             channel_versions = EXCLUDED.channel_versions, step = EXCLUDED.step, source = EXCLUDED.source`,
          [
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
        );
        if (row.ns === '')
          await tx.execute(
            `INSERT INTO ${this.threads} AS t (thread_id, created_at, updated_at, last_checkpoint_id, last_step, last_source, expires_at)
             VALUES ($1, $2, $2, $3, $4, $5, $6)
             ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at,
               last_step = CASE WHEN t.last_checkpoint_id IS NULL OR EXCLUDED.last_checkpoint_id >= t.last_checkpoint_id THEN EXCLUDED.last_step ELSE t.last_step END,
               last_source = CASE WHEN t.last_checkpoint_id IS NULL OR EXCLUDED.last_checkpoint_id >= t.last_checkpoint_id THEN EXCLUDED.last_source ELSE t.last_source END,
               last_checkpoint_id = GREATEST(COALESCE(t.last_checkpoint_id, ''), EXCLUDED.last_checkpoint_id)`,
            [row.threadId, now, row.checkpointId, row.step, row.source, expiry(now, retention)],
          );
        else await this.touchThread(tx, row.threadId, now, retention);
        if (retention.keepLatest !== undefined)
          await this.keepLatest(tx, row.threadId, row.ns, retention.keepLatest);
      }),
    );
  }

  putWrites(
    key: GraphCheckpointKey,
    writes: readonly GraphWriteRow[],
    replace: boolean,
    retention: GraphRetention,
  ): Promise<void> {
    return this.op(() =>
      this.ctx.write(async (tx) => {
        for (const w of writes)
          await tx.execute(
            `INSERT INTO ${this.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value)
             VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)
             ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO ${
               replace
                 ? 'UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value'
                 : 'NOTHING'
             }`,
            [
              key.threadId,
              key.ns,
              key.checkpointId,
              w.taskId,
              w.idx,
              w.taskPath,
              w.channel,
              w.type,
              blob(w.value),
            ],
          );
        await this.touchThread(tx, key.threadId, this.ctx.now(), retention);
      }),
    );
  }

  getCheckpoint(
    threadId: string,
    ns: string,
    checkpointId?: string,
  ): Promise<GraphCheckpointWithWrites | undefined> {
    return this.op(async () => {
      const rows =
        checkpointId === undefined
          ? await this.ctx.read<CheckpointSqlRow>(
              `SELECT ${COLUMNS} FROM ${this.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1`,
              [threadId, ns],
            )
          : await this.ctx.read<CheckpointSqlRow>(
              `SELECT ${COLUMNS} FROM ${this.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
              [threadId, ns, checkpointId],
            );
      const r = rows[0];
      return r ? this.withWrites(r) : undefined;
    });
  }

  listCheckpoints(q: GraphListQuery): Promise<GraphCheckpointWithWrites[]> {
    return this.op(async () => {
      const { sql, params } = renderListCheckpoints(q, DIALECTS.postgres, this.checkpoints);
      const rows = await this.ctx.read<CheckpointSqlRow>(sql, params);
      return Promise.all(rows.map((r) => this.withWrites(r)));
    });
  }

  deleteThread(threadId: string): Promise<void> {
    return this.op(() => this.ctx.write((tx) => this.deleteThreadNow(tx, threadId)));
  }

  copyThread(sourceThreadId: string, targetThreadId: string, retention: GraphRetention): Promise<void> {
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const has = async (id: string) =>
          (await tx.select(`SELECT 1 FROM ${this.checkpoints} WHERE thread_id = $1 LIMIT 1`, [id])).length >
          0;
        if (!(await has(sourceThreadId)))
          throw new BatonError('THREAD_NOT_FOUND', `no LangGraph thread ${sourceThreadId} to copy`, {
            data: { threadId: sourceThreadId },
          });
        if (
          (await has(targetThreadId)) ||
          (await tx.select(`SELECT 1 FROM ${this.threads} WHERE thread_id = $1`, [targetThreadId])).length > 0
        )
          throw new BatonError(
            'THREAD_EXISTS',
            `cannot copy ${sourceThreadId} to ${targetThreadId}: thread ${targetThreadId} already exists (delete it first)`,
            { data: { threadId: targetThreadId } },
          );
        const now = this.ctx.now();
        await tx.execute(
          `INSERT INTO ${this.checkpoints} (${COLUMNS})
           SELECT $1, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata_type, metadata, channel_versions, step, source, $2
           FROM ${this.checkpoints} WHERE thread_id = $3`,
          [targetThreadId, now, sourceThreadId],
        );
        await tx.execute(
          `INSERT INTO ${this.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value)
           SELECT $1, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value FROM ${this.writes} WHERE thread_id = $2`,
          [targetThreadId, sourceThreadId],
        );
        await tx.execute(
          `INSERT INTO ${this.blobs} (thread_id, checkpoint_ns, channel, version, type, value)
           SELECT $1, checkpoint_ns, channel, version, type, value FROM ${this.blobs} WHERE thread_id = $2`,
          [targetThreadId, sourceThreadId],
        );
        await tx.execute(
          `INSERT INTO ${this.threads} (thread_id, created_at, updated_at, last_checkpoint_id, last_step, last_source, expires_at)
           SELECT $1, $2, $2, last_checkpoint_id, last_step, last_source, $3 FROM ${this.threads} WHERE thread_id = $4`,
          [targetThreadId, now, expiry(now, retention), sourceThreadId],
        );
      }),
    );
  }

  prune(threadIds: readonly string[], strategy: 'keep_latest' | 'delete'): Promise<void> {
    return this.op(() =>
      this.ctx.write(async (tx) => {
        for (const id of threadIds) {
          if (strategy === 'delete') {
            await this.deleteThreadNow(tx, id);
            continue;
          }
          await tx.execute(
            `DELETE FROM ${this.checkpoints} c WHERE thread_id = $1 AND checkpoint_id < (
               SELECT max(k.checkpoint_id) FROM ${this.checkpoints} k WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = c.checkpoint_ns)`,
            [id],
          );
          await tx.execute(
            `DELETE FROM ${this.writes} w WHERE thread_id = $1 AND NOT EXISTS (
               SELECT 1 FROM ${this.checkpoints} k WHERE k.thread_id = w.thread_id AND k.checkpoint_ns = w.checkpoint_ns AND k.checkpoint_id = w.checkpoint_id)`,
            [id],
          );
          const namespaces = await tx.select<{ checkpoint_ns: string }>(
            `SELECT DISTINCT checkpoint_ns FROM ${this.blobs} WHERE thread_id = $1`,
            [id],
          );
          for (const n of namespaces) await this.collectBlobs(tx, id, n.checkpoint_ns);
        }
      }),
    );
  }

  sweepThreads(limit = 500): Promise<number> {
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const due = await tx.select<{ thread_id: string }>(
          `SELECT thread_id FROM ${this.threads} WHERE expires_at IS NOT NULL AND expires_at <= $1 LIMIT $2`,
          [this.ctx.now(), limit],
        );
        for (const t of due) await this.deleteThreadNow(tx, t.thread_id);
        return due.length;
      }),
    );
  }

  private threadSelect(): string {
    return `SELECT t.*,
      (SELECT count(*) FROM ${this.checkpoints} c WHERE c.thread_id = t.thread_id) AS checkpoints,
      (SELECT count(*) FROM ${this.writes} w WHERE w.thread_id = t.thread_id) AS writes
      FROM ${this.threads} t`;
  }

  listThreads(limit: number): Promise<GraphThreadRecord[]> {
    return this.op(async () =>
      (
        await this.ctx.read<ThreadSqlRow>(
          `${this.threadSelect()} ORDER BY t.updated_at DESC, t.thread_id LIMIT $1`,
          [Math.max(1, Math.floor(limit))],
        )
      ).map(toThread),
    );
  }

  getThread(threadId: string): Promise<GraphThreadRecord | undefined> {
    return this.op(async () => {
      const [row] = await this.ctx.read<ThreadSqlRow>(`${this.threadSelect()} WHERE t.thread_id = $1`, [
        threadId,
      ]);
      return row ? toThread(row) : undefined;
    });
  }

  private async withWrites(r: CheckpointSqlRow): Promise<GraphCheckpointWithWrites> {
    const [blobs, writes] = await Promise.all([
      this.ctx.read<GraphBlobRow>(
        `SELECT b.channel, b.version, b.type, b.value FROM jsonb_each_text($1::jsonb) j JOIN ${this.blobs} b
         ON b.thread_id = $2 AND b.checkpoint_ns = $3 AND b.channel = j.key AND b.version = j.value`,
        [r.channel_versions, r.thread_id, r.checkpoint_ns],
      ),
      this.ctx.read<WriteSqlRow>(
        `SELECT task_id, task_path, idx, channel, type, value FROM ${this.writes}
         WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
        [r.thread_id, r.checkpoint_ns, r.checkpoint_id],
      ),
    ]);
    return {
      row: toRow(r),
      blobs,
      writes: writes.map(toWriteRow),
    };
  }

  private async touchThread(tx: Tx, threadId: string, now: number, retention: GraphRetention): Promise<void> {
    await tx.execute(
      `INSERT INTO ${this.threads} (thread_id, created_at, updated_at, expires_at) VALUES ($1, $2, $2, $3)
       ON CONFLICT (thread_id) DO UPDATE SET updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at`,
      [threadId, now, expiry(now, retention)],
    );
  }

  private async keepLatest(tx: Tx, threadId: string, ns: string, keep: number): Promise<void> {
    const [oldest] = await tx.select<{ checkpoint_id: string }>(
      `SELECT checkpoint_id FROM ${this.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2
       ORDER BY checkpoint_id DESC LIMIT 1 OFFSET $3`,
      [threadId, ns, keep - 1],
    );
    if (!oldest) return;
    const dropped = await tx.execute(
      `DELETE FROM ${this.checkpoints} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id < $3`,
      [threadId, ns, oldest.checkpoint_id],
    );
    if (dropped === 0) return;
    await tx.execute(
      `DELETE FROM ${this.writes} WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id < $3`,
      [threadId, ns, oldest.checkpoint_id],
    );
    await this.collectBlobs(tx, threadId, ns);
  }

  private async collectBlobs(tx: Tx, threadId: string, ns: string): Promise<void> {
    await tx.execute(
      `DELETE FROM ${this.blobs} b WHERE thread_id = $1 AND checkpoint_ns = $2 AND NOT EXISTS (
         SELECT 1 FROM ${this.checkpoints} c, jsonb_each_text(c.channel_versions::jsonb) j
         WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND j.key = b.channel AND j.value = b.version)`,
      [threadId, ns],
    );
  }

  private async deleteThreadNow(tx: Tx, threadId: string): Promise<void> {
    for (const table of [this.blobs, this.writes, this.checkpoints, this.threads])
      await tx.execute(`DELETE FROM ${table} WHERE thread_id = $1`, [threadId]);
  }
}
