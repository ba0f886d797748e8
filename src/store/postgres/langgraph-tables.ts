/**
 * LangGraph.js checkpoints in the Postgres store (migration 0015), the same contract as the SQLite
 * tables: every operation is one write of the store's queue (its own savepoint in a grouped
 * transaction), names its schema, and sorts ids by byte order. The statements are shared with
 * SQLite (../langgraph-sql.ts); this file only executes them.
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
  type CheckpointSqlRow,
  threadExpiry as expiry,
  renderListCheckpoints,
  type ThreadSqlRow,
  toCheckpointRow as toRow,
  toThreadRecord as toThread,
  toWriteRow,
  type WriteSqlRow,
} from '../langgraph-rules.ts';
import { graphStatements, insertChunks, lastPerIndex } from '../langgraph-sql.ts';
import type { PgContext } from './pg-context.ts';
import { quoteIdent } from './sql.ts';
import type { Tx } from './write-queue.ts';

export class PgGraphCheckpoints implements GraphCheckpointStore {
  private readonly checkpoints: string;
  private readonly sql: ReturnType<typeof graphStatements>;

  constructor(
    private readonly ctx: PgContext,
    /** Waits for the store's migrations and refuses work after close. */
    private readonly op: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {
    const q = (t: string) => `${quoteIdent(ctx.t.schema)}.${t}`;
    this.checkpoints = q('langgraph_checkpoints');
    this.sql = graphStatements(DIALECTS.postgres, {
      threads: q('langgraph_threads'),
      checkpoints: this.checkpoints,
      writes: q('langgraph_writes'),
      blobs: q('langgraph_blobs'),
    });
  }

  now(): number {
    return this.ctx.now();
  }

  putCheckpoint(
    row: Omit<GraphCheckpointRow, 'createdAt'>,
    blobs: readonly GraphBlobRow[],
    retention: GraphRetention,
  ): Promise<void> {
    const { sql } = this;
    const versions = JSON.stringify(row.channelVersions);
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const now = this.ctx.now();
        for (const chunk of insertChunks(blobs))
          await tx.execute(sql.insertBlobs.text(chunk.length), sql.insertBlobs.values(row, chunk));
        await tx.execute(sql.upsertCheckpoint.text, sql.upsertCheckpoint.values(row, versions, now));
        await this.touchThread(tx, row.threadId, now, retention);
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
    const { sql } = this;
    return this.op(() =>
      this.ctx.write(async (tx) => {
        for (const chunk of insertChunks(replace ? lastPerIndex(writes) : writes))
          await tx.execute(sql.insertWrites.text(chunk.length, replace), sql.insertWrites.values(key, chunk));
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
          ? await this.ctx.read<CheckpointSqlRow>(this.sql.latestCheckpoint, [threadId, ns])
          : await this.ctx.read<CheckpointSqlRow>(this.sql.checkpointById, [threadId, ns, checkpointId]);
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
    const { sql } = this;
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const has = async (id: string) => (await tx.select(sql.hasCheckpoints, [id])).length > 0;
        if (!(await has(sourceThreadId)))
          throw new BatonError('THREAD_NOT_FOUND', `no LangGraph thread ${sourceThreadId} to copy`, {
            data: { threadId: sourceThreadId },
          });
        if ((await has(targetThreadId)) || (await tx.select(sql.hasThread, [targetThreadId])).length > 0)
          throw new BatonError(
            'THREAD_EXISTS',
            `cannot copy ${sourceThreadId} to ${targetThreadId}: thread ${targetThreadId} already exists (delete it first)`,
            { data: { threadId: targetThreadId } },
          );
        const now = this.ctx.now();
        await tx.execute(sql.copyCheckpoints, [targetThreadId, now, sourceThreadId]);
        await tx.execute(sql.copyWrites, [targetThreadId, sourceThreadId]);
        await tx.execute(sql.copyBlobs, [targetThreadId, sourceThreadId]);
        await tx.execute(sql.copyThread, [targetThreadId, now, now, expiry(now, retention), sourceThreadId]);
      }),
    );
  }

  prune(threadIds: readonly string[], strategy: 'keep_latest' | 'delete'): Promise<void> {
    const { sql } = this;
    return this.op(() =>
      this.ctx.write(async (tx) => {
        for (const id of threadIds) {
          if (strategy === 'delete') {
            await this.deleteThreadNow(tx, id);
            continue;
          }
          await tx.execute(sql.pruneCheckpoints, [id]);
          await tx.execute(sql.pruneWrites, [id]);
          const namespaces = await tx.select<{ checkpoint_ns: string }>(sql.blobNamespaces, [id]);
          for (const n of namespaces) await this.collectBlobs(tx, id, n.checkpoint_ns);
        }
      }),
    );
  }

  sweepThreads(limit = 500): Promise<number> {
    return this.op(() =>
      this.ctx.write(async (tx) => {
        const due = await tx.select<{ thread_id: string }>(this.sql.dueThreads, [this.ctx.now(), limit]);
        for (const t of due) await this.deleteThreadNow(tx, t.thread_id);
        return due.length;
      }),
    );
  }

  listThreads(limit: number): Promise<GraphThreadRecord[]> {
    return this.op(async () =>
      (await this.ctx.read<ThreadSqlRow>(this.sql.listThreads, [Math.max(1, Math.floor(limit))])).map(
        toThread,
      ),
    );
  }

  getThread(threadId: string): Promise<GraphThreadRecord | undefined> {
    return this.op(async () => {
      const [row] = await this.ctx.read<ThreadSqlRow>(this.sql.getThread, [threadId]);
      return row ? toThread(row) : undefined;
    });
  }

  private async withWrites(r: CheckpointSqlRow): Promise<GraphCheckpointWithWrites> {
    const [blobs, writes] = await Promise.all([
      this.ctx.read<GraphBlobRow>(this.sql.blobsOf, [r.channel_versions, r.thread_id, r.checkpoint_ns]),
      this.ctx.read<WriteSqlRow>(this.sql.writesOf, [r.thread_id, r.checkpoint_ns, r.checkpoint_id]),
    ]);
    return { row: toRow(r), blobs, writes: writes.map(toWriteRow) };
  }

  private async touchThread(tx: Tx, threadId: string, now: number, retention: GraphRetention): Promise<void> {
    await tx.execute(
      this.sql.touchThread.text,
      this.sql.touchThread.values(threadId, now, expiry(now, retention)),
    );
  }

  private async keepLatest(tx: Tx, threadId: string, ns: string, keep: number): Promise<void> {
    const [oldest] = await tx.select<{ checkpoint_id: string }>(this.sql.oldestKept, [
      threadId,
      ns,
      keep - 1,
    ]);
    if (!oldest) return;
    const dropped = await tx.execute(this.sql.checkpointsBefore, [threadId, ns, oldest.checkpoint_id]);
    if (dropped === 0) return;
    await tx.execute(this.sql.writesBefore, [threadId, ns, oldest.checkpoint_id]);
    await this.collectBlobs(tx, threadId, ns);
  }

  private async collectBlobs(tx: Tx, threadId: string, ns: string): Promise<void> {
    await tx.execute(this.sql.collectBlobs, [threadId, ns, threadId, ns]);
  }

  private async deleteThreadNow(tx: Tx, threadId: string): Promise<void> {
    for (const statement of this.sql.deleteThread) await tx.execute(statement, [threadId]);
  }
}
