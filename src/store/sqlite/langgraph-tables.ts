/**
 * LangGraph.js checkpoints in the SQLite store (migrations 0018, 0026: checkpoints, writes and
 * values in one table). Writes go through the store's write queue, so a checkpoint and the writes
 * LangGraph issues in the same turn share one commit and one fsync; each put or putWrites is its own
 * savepoint, so it lands whole or not at all. The statements are in ./langgraph-entries-sql.ts (the
 * threads' shared with Postgres); this file only executes them.
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
import { insertChunks, lastPerIndex } from '../langgraph-sql.ts';
import { CHECKPOINTS, ENTRY_CHECKPOINT_COLUMNS, ENTRY_SQL as SQL } from './langgraph-entries-sql.ts';
import type { SqliteContext } from './sqlite-context.ts';

const LIST_LAYOUT = { columns: ENTRY_CHECKPOINT_COLUMNS, where: CHECKPOINTS };

export class SqliteGraphCheckpoints implements GraphCheckpointStore {
  /**
   * The thread the last successful put or putWrites touched, and in which transaction: a step's
   * writes and checkpoint share a commit, and the second need not touch the same thread again.
   */
  private touched: { tx: number; threadId: string; ttlMs: number | undefined } | undefined;

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
      // The checkpoint and (nearly always all) its values in one statement.
      const [first = [], ...rest] = insertChunks(blobs);
      this.ctx
        .stmt(SQL.putCheckpoint.text(first.length))
        .run(...SQL.putCheckpoint.values(row, versions, now, first));
      for (const chunk of rest)
        this.ctx.stmt(SQL.insertValues.text(chunk.length)).run(...SQL.insertValues.values(row, chunk));
      const touched = this.touchThread(row.threadId, now, retention);
      if (retention.keepLatest !== undefined) this.keepLatest(row.threadId, row.ns, retention.keepLatest);
      // Only now: a write that threw is rolled back to its savepoint, its touch with it.
      this.touched = touched;
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
      for (const chunk of insertChunks(replace ? lastPerIndex(writes) : writes))
        this.ctx
          .stmt(SQL.insertWrites.text(chunk.length, replace))
          .run(...SQL.insertWrites.values(key, chunk));
      this.touched = this.touchThread(key.threadId, this.ctx.now(), retention);
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
        ? this.ctx.stmt(SQL.latestCheckpoint).get(threadId, ns)
        : this.ctx.stmt(SQL.checkpointById).get(threadId, ns, checkpointId)
    ) as CheckpointSqlRow | undefined;
    if (!r) return undefined;
    return this.withWrites(r);
  }

  async listCheckpoints(q: GraphListQuery): Promise<GraphCheckpointWithWrites[]> {
    this.guard();
    const { sql, params } = renderListCheckpoints(q, DIALECTS.sqlite, 'langgraph_entries', LIST_LAYOUT);
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
      const has = this.ctx.stmt(SQL.hasCheckpoints);
      if (!has.get(sourceThreadId))
        throw new BatonError('THREAD_NOT_FOUND', `no LangGraph thread ${sourceThreadId} to copy`, {
          data: { threadId: sourceThreadId },
        });
      if (has.get(targetThreadId) || this.ctx.stmt(SQL.hasThread).get(targetThreadId))
        throw new BatonError(
          'THREAD_EXISTS',
          `cannot copy ${sourceThreadId} to ${targetThreadId}: thread ${targetThreadId} already exists (delete it first)`,
          { data: { threadId: targetThreadId } },
        );
      const now = this.ctx.now();
      this.ctx.stmt(SQL.copyEntries).run(targetThreadId, now, sourceThreadId, targetThreadId, sourceThreadId);
      this.ctx.stmt(SQL.copyThread).run(targetThreadId, now, now, expiry(now, retention), sourceThreadId);
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
        this.ctx.stmt(SQL.pruneCheckpoints).run(id);
        this.ctx.stmt(SQL.pruneWrites).run(id);
        const namespaces = this.ctx.stmt(SQL.valueNamespaces).pluck().all(id) as string[];
        for (const ns of namespaces) this.collectBlobs(id, ns);
      }
    });
  }

  sweepThreads(limit = 500): Promise<number> {
    this.guard();
    return this.ctx.write(() => {
      const due = this.ctx.stmt(SQL.dueThreads).all(this.ctx.now(), limit) as Array<{ thread_id: string }>;
      for (const t of due) this.deleteThreadNow(t.thread_id);
      return due.length;
    });
  }

  async listThreads(limit: number): Promise<GraphThreadRecord[]> {
    this.guard();
    const rows = this.ctx.stmt(SQL.listThreads).all(Math.max(1, Math.floor(limit))) as ThreadSqlRow[];
    return rows.map(toThread);
  }

  async getThread(threadId: string): Promise<GraphThreadRecord | undefined> {
    this.guard();
    const row = this.ctx.stmt(SQL.getThread).get(threadId) as ThreadSqlRow | undefined;
    return row ? toThread(row) : undefined;
  }

  private withWrites(r: CheckpointSqlRow): GraphCheckpointWithWrites {
    const blobs = this.ctx
      .stmt(SQL.valuesOf)
      .all(r.channel_versions, r.thread_id, r.checkpoint_ns) as GraphBlobRow[];
    const writes = this.ctx
      .stmt(SQL.writesOf)
      .all(r.thread_id, r.checkpoint_ns, r.checkpoint_id) as WriteSqlRow[];
    return { row: toRow(r), blobs, writes: writes.map(toWriteRow) };
  }

  /**
   * The thread exists and its expiry slides (see SQL.touchThread), unless an earlier write of this
   * transaction touched it with the same TTL: both run at the same moment, so the second would find
   * nothing to move (a statement per LangGraph step saved). Returns what the caller records once
   * its write has succeeded.
   */
  private touchThread(threadId: string, now: number, retention: GraphRetention) {
    const tx = this.ctx.queue.transactions;
    const last = this.touched;
    if (last?.tx !== tx || last.threadId !== threadId || last.ttlMs !== retention.ttlMs)
      this.ctx
        .stmt(SQL.touchThread.text)
        .run(...SQL.touchThread.values(threadId, now, expiry(now, retention)));
    return { tx, threadId, ttlMs: retention.ttlMs };
  }

  /** Drops checkpoints older than the newest `keep` of a namespace, with their writes. */
  private keepLatest(threadId: string, ns: string, keep: number): void {
    const oldestKept = this.ctx
      .stmt(SQL.oldestKept)
      .pluck()
      .get(threadId, ns, keep - 1) as string | undefined;
    if (oldestKept === undefined) return;
    const dropped = this.ctx.stmt(SQL.entriesBefore).run(threadId, ns, oldestKept).changes;
    if (dropped === 0) return;
    this.collectBlobs(threadId, ns);
  }

  /** Deletes the channel values no remaining checkpoint of the namespace reads. */
  private collectBlobs(threadId: string, ns: string): void {
    this.ctx.stmt(SQL.collectValues).run(threadId, ns, threadId, ns);
  }

  private deleteThreadNow(threadId: string): void {
    // A later write of this transaction must insert the thread row again.
    if (this.touched?.threadId === threadId) this.touched = undefined;
    for (const sql of SQL.deleteThread) this.ctx.stmt(sql).run(threadId);
  }
}
