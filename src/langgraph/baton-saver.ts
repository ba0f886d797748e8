/**
 * A LangGraph.js checkpointer on Baton's store. LangGraph's serializer turns checkpoints and writes
 * into typed bytes; the store keeps them with group commit (a step's checkpoint and its writes
 * usually share one fsync) and applies the retention in the same transaction.
 */

import { isDeepStrictEqual } from 'node:util';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { ValidationError } from '../core/index.ts';
import type {
  GraphBlobRow,
  GraphCheckpointKey,
  GraphCheckpointStore,
  GraphCheckpointWithWrites,
  GraphRetention,
  GraphThreadRecord,
  GraphWriteRow,
} from '../store/index.ts';
import { openSqliteStore, SqliteStore } from '../store/index.ts';
import { type Dump, plainJson } from './plain-json.ts';
import { type ResolvedRetention, type RetentionOptions, resolveRetention } from './saver-options.ts';

export interface BatonSaverOptions extends RetentionOptions {
  /**
   * Where checkpoints live: a Baton SQLite file path, an open `SqliteStore` (for example
   * `baton.store` of a `createBaton` handle, so threads and runs share one database), or any store
   * with LangGraph tables.
   */
  store: string | SqliteStore | { langgraph: GraphCheckpointStore };
  /** LangGraph's serializer. @default JsonPlusSerializer */
  serde?: SerializerProtocol;
  /**
   * How a store this saver opens from a path commits (an open store keeps its own setting).
   * `NORMAL` (WAL, no fsync per commit): a checkpoint committed survives the process being killed,
   * not a power loss or OS crash, which may drop the last steps — what LangGraph's own SqliteSaver
   * does (better-sqlite3 builds SQLite with WAL synchronous=NORMAL). `FULL`: every step's commit
   * is fsynced before the next step starts (Baton's default for runs), at the cost of an fsync per
   * step. @default 'NORMAL'
   */
  synchronous?: 'NORMAL' | 'FULL';
}

/** Rows read per query when `list` walks many checkpoints. */
const PAGE = 64;
type Dumped = [string, Uint8Array];
/** A channel without a value at its new version (emptied in this step). */
const EMPTY_VALUE: Dumped = ['empty', new Uint8Array(0)];

/** The values, awaited only if one of them is a promise (the fast path is synchronous). */
function all<T>(values: Array<T | Promise<T>>): T[] | Promise<T[]> {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : (values as T[]);
}

export class BatonSaver extends BaseCheckpointSaver {
  readonly store: GraphCheckpointStore;
  private readonly ownedStore: SqliteStore | undefined;
  private readonly retention: GraphRetention;
  private readonly sweepEveryMs: number;
  private nextSweepAt = 0;
  /** How values are serialized: `serde.dumpsTyped`, or its faster twin for plain data (plain-json.ts). */
  private dump: Dump | undefined;

  constructor(options: BatonSaverOptions) {
    super(options.serde);
    const resolved: ResolvedRetention = resolveRetention(options);
    this.retention = resolved.retention;
    this.sweepEveryMs = resolved.sweepEveryMs;
    const sync = options.synchronous;
    if (sync !== undefined && sync !== 'NORMAL' && sync !== 'FULL')
      throw new ValidationError('synchronous', '"NORMAL" or "FULL"', sync, { code: 'INVALID_OPTION' });
    if (sync !== undefined && typeof options.store !== 'string')
      throw new ValidationError(
        'synchronous',
        'no value when the store is already open (it keeps its own; open it with { synchronous })',
        sync,
        { code: 'INVALID_OPTION' },
      );
    if (typeof options.store === 'string') {
      this.ownedStore = openSqliteStore(options.store, { synchronous: sync ?? 'NORMAL' });
      this.store = this.ownedStore.langgraph;
    } else if (options.store instanceof SqliteStore) {
      this.store = options.store.langgraph;
    } else if (options.store && typeof options.store === 'object' && 'langgraph' in options.store) {
      this.store = options.store.langgraph;
    } else {
      throw new ValidationError('store', 'a Baton SQLite file path or an open SqliteStore', options.store, {
        code: 'INVALID_OPTION',
      });
    }
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const checkpointId = getCheckpointId(config) || undefined;
    const found = await this.store.getCheckpoint(String(threadId), ns, checkpointId);
    if (!found) return undefined;
    return this.toTuple(found, checkpointId === undefined ? undefined : config);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const wanted = Object.entries(filter ?? {}).filter(([, v]) => v !== undefined);
    let after: GraphCheckpointKey | undefined;
    for (;;) {
      // Without a filter the page is exactly what is still wanted; with one, read ahead.
      const size = wanted.length === 0 && Number.isFinite(remaining) ? Math.min(remaining, PAGE) : PAGE;
      const page = await this.store.listCheckpoints({
        ...(threadId !== undefined ? { threadId: String(threadId) } : {}),
        ...(ns !== undefined && ns !== null ? { ns } : {}),
        ...(before?.configurable?.checkpoint_id !== undefined
          ? { beforeId: String(before.configurable.checkpoint_id) }
          : {}),
        ...(after ? { after } : {}),
        limit: size,
      });
      for (const item of page) {
        after = item.row;
        if (onlyId && item.row.checkpointId !== onlyId) continue;
        if (wanted.length > 0) {
          const metadata = (await this.serde.loadsTyped(item.row.metadataType, item.row.metadata)) as Record<
            string,
            unknown
          >;
          if (!wanted.every(([k, v]) => isDeepStrictEqual(metadata?.[k], v))) continue;
        }
        yield await this.toTuple(item, undefined);
        if (--remaining <= 0) return;
      }
      if (page.length < size) return;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (!config.configurable) throw new ValidationError('config.configurable', 'an object with a thread_id');
    const threadId = config.configurable.thread_id as unknown;
    if (threadId === undefined || threadId === null || threadId === '')
      throw new ValidationError('config.configurable.thread_id', 'a thread id (string)', threadId);
    const ns = (config.configurable.checkpoint_ns as string | undefined) ?? '';
    const parent = config.configurable.checkpoint_id as string | undefined;
    // Channel values are stored once per version (only those that changed in this step); the
    // versions are the row's channel_versions column (which the blob reads and retention need), so
    // the serialized checkpoint carries neither: a read puts both back. The versions map grows with
    // the graph (a 200-node chain: ~2 KB of each ~5 KB checkpoint), and was stored twice.
    const values = checkpoint.channel_values as Record<string, unknown>;
    const { channel_versions: _versions, ...rest } = checkpoint;
    const dump = this.dump ?? (await this.loadDump());
    const changed = Object.entries(newVersions ?? {});
    const dumped = await all([
      dump({ ...rest, channel_values: {} }),
      dump(metadata),
      ...changed.map(([channel]) => (channel in values ? dump(values[channel]) : EMPTY_VALUE)),
    ]);
    const [[type, bytes], [metadataType, metadataBytes]] = dumped as [Dumped, Dumped];
    const blobs = changed.map(([channel, version], i): GraphBlobRow => {
      const [t, v] = dumped[i + 2] as Dumped;
      return { channel, version: String(version), type: t, value: v };
    });
    await this.store.putCheckpoint(
      {
        threadId: String(threadId),
        ns,
        checkpointId: checkpoint.id,
        parentCheckpointId: parent ?? null,
        type,
        checkpoint: bytes,
        metadataType,
        metadata: metadataBytes,
        channelVersions: checkpoint.channel_versions,
        step: typeof metadata?.step === 'number' ? metadata.step : null,
        source: typeof metadata?.source === 'string' ? metadata.source : null,
      },
      blobs,
      this.retention,
    );
    this.maybeSweep();
    return { configurable: { thread_id: String(threadId), checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    const threadId = config.configurable?.thread_id as unknown;
    const checkpointId = config.configurable?.checkpoint_id as unknown;
    if (threadId === undefined || threadId === null || threadId === '')
      throw new ValidationError('config.configurable.thread_id', 'a thread id (string)', threadId);
    if (typeof checkpointId !== 'string' || checkpointId === '')
      throw new ValidationError(
        'config.configurable.checkpoint_id',
        'the id of the checkpoint the writes belong to',
        checkpointId,
      );
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const dump = this.dump ?? (await this.loadDump());
    const dumped = await all(writes.map(([, value]) => dump(value)));
    const rows = writes.map(([channel], i): GraphWriteRow => {
      const [type, bytes] = dumped[i] as Dumped;
      return { taskId, taskPath, idx: WRITES_IDX_MAP[channel] ?? i, channel, type, value: bytes };
    });
    // Special writes (errors, interrupts) replace an earlier one of their kind; regular writes of a
    // task are written once, so a retried task cannot change what a finished one recorded.
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    await this.store.putWrites(
      { threadId: String(threadId), ns, checkpointId },
      rows,
      replace,
      this.retention,
    );
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.store.deleteThread(threadId);
  }

  /**
   * Copies a thread — every checkpoint of every namespace and their pending writes — to a new thread
   * id, in one transaction: a fork to explore from without touching the original.
   */
  async copyThread(sourceThreadId: string, targetThreadId: string): Promise<void> {
    await this.store.copyThread(sourceThreadId, targetThreadId, this.retention);
  }

  /**
   * `keep_latest` keeps only the newest checkpoint of each namespace of the threads (and its
   * writes); `delete` deletes the threads.
   */
  async prune(
    threadIds: readonly string[],
    strategy: 'keep_latest' | 'delete' = 'keep_latest',
  ): Promise<void> {
    if (strategy !== 'keep_latest' && strategy !== 'delete')
      throw new ValidationError('strategy', '"keep_latest" or "delete"', strategy, {
        code: 'INVALID_OPTION',
      });
    await this.store.prune(threadIds, strategy);
  }

  /** Deletes the threads whose TTL has passed now; returns how many. */
  sweep(): Promise<number> {
    return this.store.sweepThreads();
  }

  listThreads(limit = 100): Promise<GraphThreadRecord[]> {
    return this.store.listThreads(limit);
  }

  getThread(threadId: string): Promise<GraphThreadRecord | undefined> {
    return this.store.getThread(threadId);
  }

  /** Closes the store if this saver opened it from a path. */
  async close(): Promise<void> {
    await this.ownedStore?.close();
  }

  private async loadDump(): Promise<Dump> {
    this.dump ??= await plainJson(this.serde);
    return this.dump;
  }

  private maybeSweep(): void {
    if (this.retention.ttlMs === undefined) return;
    const now = this.store.now();
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + this.sweepEveryMs;
    // Retention is housekeeping: a failed sweep is retried at the next interval, never surfaced
    // through a checkpoint write that succeeded.
    this.store.sweepThreads().catch(() => {
      this.nextSweepAt = 0;
    });
  }

  private async toTuple(
    { row, blobs, writes }: GraphCheckpointWithWrites,
    requested: RunnableConfig | undefined,
  ): Promise<CheckpointTuple> {
    const ordered = writes
      .map((w) => ({ w, key: writesSortKey(w.taskPath, w.taskId, w.idx) }))
      .sort((a, b) => compareWritesSortKeys(a.key, b.key));
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      ordered.map(
        async ({ w }) =>
          [w.taskId, w.channel, await this.serde.loadsTyped(w.type, w.value)] as CheckpointPendingWrite,
      ),
    );
    const checkpoint = (await this.serde.loadsTyped(row.type, row.checkpoint)) as Checkpoint;
    // Rows written before the versions left the serialized checkpoint hold the same map in both.
    checkpoint.channel_versions = row.channelVersions;
    const values: Record<string, unknown> = {};
    for (const b of blobs)
      if (b.type !== 'empty') values[b.channel] = await this.serde.loadsTyped(b.type, b.value);
    checkpoint.channel_values = values;
    if (checkpoint.v < 4 && row.parentCheckpointId !== null)
      await this.migratePendingSends(checkpoint, row.threadId, row.ns, row.parentCheckpointId);
    const tuple: CheckpointTuple = {
      config: requested ?? {
        configurable: { thread_id: row.threadId, checkpoint_ns: row.ns, checkpoint_id: row.checkpointId },
      },
      checkpoint,
      metadata: (await this.serde.loadsTyped(row.metadataType, row.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (row.parentCheckpointId !== null)
      tuple.parentConfig = {
        configurable: {
          thread_id: row.threadId,
          checkpoint_ns: row.ns,
          checkpoint_id: row.parentCheckpointId,
        },
      };
    return tuple;
  }

  /** Checkpoints before format 4 kept pending sends as writes of the parent checkpoint. */
  private async migratePendingSends(checkpoint: Checkpoint, threadId: string, ns: string, parentId: string) {
    const parent = await this.store.getCheckpoint(threadId, ns, parentId);
    const sends = (parent?.writes ?? [])
      .filter((w) => w.channel === TASKS)
      .map((w) => ({ w, key: writesSortKey(w.taskPath, w.taskId, w.idx) }))
      .sort((a, b) => compareWritesSortKeys(a.key, b.key));
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = await Promise.all(
      sends.map(({ w }) => this.serde.loadsTyped(w.type, w.value)),
    );
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}
