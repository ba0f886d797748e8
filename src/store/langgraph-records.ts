/**
 * The rows of LangGraph.js checkpoints kept in Baton's store (`baton/langgraph`). The store keeps
 * bytes and their serializer type tags; what they mean is LangGraph's business, decoded by the
 * checkpointer adapter. Nothing here imports LangGraph, so `baton ls`/`show` read threads without it.
 */

/** Where a checkpoint lives: a thread, a namespace inside it (subgraphs), and its id. */
export interface GraphCheckpointKey {
  threadId: string;
  /** '' for the root graph. */
  ns: string;
  checkpointId: string;
}

export interface GraphCheckpointRow extends GraphCheckpointKey {
  parentCheckpointId: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadataType: string;
  metadata: Uint8Array;
  /** The checkpoint's channel versions: the blobs it reads. */
  channelVersions: Readonly<Record<string, number | string>>;
  /** Copied out of the metadata so the CLI can show them without the serializer. */
  step: number | null;
  source: string | null;
  createdAt: number;
}

export interface GraphWriteRow {
  taskId: string;
  /** The task's path in the superstep ('' when LangGraph gave none). */
  taskPath: string;
  /** The write's index; LangGraph's special writes (errors, interrupts) use negative indexes. */
  idx: number;
  channel: string;
  type: string;
  value: Uint8Array;
}

/** A channel's value at one version, shared by every checkpoint that did not change the channel. */
export interface GraphBlobRow {
  channel: string;
  /** The channel version, as text. */
  version: string;
  /** The serializer's type tag; 'empty' records that the channel had no value at this version. */
  type: string;
  value: Uint8Array;
}

export interface GraphCheckpointWithWrites {
  row: GraphCheckpointRow;
  /** The values of the checkpoint's channels at its versions. */
  blobs: GraphBlobRow[];
  writes: GraphWriteRow[];
}

export interface GraphRetention {
  /** Delete a thread this long after its last write (sliding). Absent: kept until deleted. */
  ttlMs?: number;
  /** Keep only the newest N checkpoints of each namespace of a thread (and their writes). */
  keepLatest?: number;
}

export interface GraphThreadRecord {
  threadId: string;
  createdAt: number;
  updatedAt: number;
  lastCheckpointId: string | null;
  lastStep: number | null;
  lastSource: string | null;
  expiresAt: number | null;
  /** Checkpoints stored now, all namespaces. */
  checkpoints: number;
  /** Pending writes stored now, all namespaces. */
  writes: number;
}

export interface GraphListQuery {
  threadId?: string;
  ns?: string;
  /** Only checkpoints with an id below this one. */
  beforeId?: string;
  /** Resume a listing after this row (ids descending, then thread and namespace descending). */
  after?: GraphCheckpointKey;
  limit: number;
}

/** LangGraph checkpoint storage; every write is one transaction. */
export interface GraphCheckpointStore {
  /**
   * Stores a checkpoint with the values of the channels it changed, refreshes its thread and applies
   * the retention, atomically.
   */
  putCheckpoint(
    row: Omit<GraphCheckpointRow, 'createdAt'>,
    blobs: readonly GraphBlobRow[],
    retention: GraphRetention,
  ): Promise<void>;
  /**
   * Stores the writes of one task against a checkpoint, all or none. `replace` overwrites writes
   * already stored under the same (task, index); otherwise the first write stays.
   */
  putWrites(
    key: GraphCheckpointKey,
    writes: readonly GraphWriteRow[],
    replace: boolean,
    retention: GraphRetention,
  ): Promise<void>;
  /** A checkpoint (the newest of the namespace when no id is given) with its pending writes. */
  getCheckpoint(
    threadId: string,
    ns: string,
    checkpointId?: string,
  ): Promise<GraphCheckpointWithWrites | undefined>;
  /** One page of checkpoints, newest first, with their pending writes. */
  listCheckpoints(query: GraphListQuery): Promise<GraphCheckpointWithWrites[]>;
  deleteThread(threadId: string): Promise<void>;
  /** Copies every checkpoint and write of a thread to a new thread id (THREAD_EXISTS if taken). */
  copyThread(sourceThreadId: string, targetThreadId: string, retention: GraphRetention): Promise<void>;
  /** Keeps only the newest checkpoint of each namespace of these threads, or deletes them. */
  prune(threadIds: readonly string[], strategy: 'keep_latest' | 'delete'): Promise<void>;
  /** Deletes threads whose TTL has passed; returns how many. */
  sweepThreads(limit?: number): Promise<number>;
  listThreads(limit: number): Promise<GraphThreadRecord[]>;
  getThread(threadId: string): Promise<GraphThreadRecord | undefined>;
  /** The store's clock, for the adapter's sweeping cadence. */
  now(): number;
}
