/**
 * What one write sees of its batch's transaction (`Tx`), what it leaves for the commit (`WriteScope`:
 * its events, the roots it learnt, whether it made something due), and a result read after COMMIT
 * (`AfterCommit`). The queue that runs writes in batches is write-queue.ts.
 */
import type { BatonEvent, NewEvent } from '../../core/index.ts';
import type { BatchConn, Later, RowStatement, Touch } from './batch-conn.ts';

/** An event appended by a write, waiting for its id (drawn when the transaction commits). */
export interface PendingEvent {
  event: NewEvent;
  rootId: string;
  at: number;
  /** The event's data as stored (JSON text). */
  text: string;
}

export class WriteScope {
  /** Events this write appended, in order; they get their ids when the batch commits. */
  readonly events: PendingEvent[] = [];
  /** Filled with the stored events (ids assigned) right before COMMIT. */
  readonly appended: BatonEvent[] = [];
  /** Roots of runs this write created or read: events about them need no lookup. */
  readonly roots = new Map<string, string>();
  /** This write made something due that other processes act on (a timer, a delivery). */
  wake = false;
}

/**
 * One write's view of the transaction. `touches` says which runs a statement may change (see
 * batch-conn.ts); left out, the batch assumes any.
 */
export class Tx {
  constructor(
    /** The batch's connection (shared by the batch's writes). */
    readonly batch: BatchConn,
    readonly scope: WriteScope,
  ) {}

  /** Statements may be kept for the next round trip (the batch's first try). */
  get fast(): boolean {
    return this.batch.fast;
  }

  async select<R>(text: string, values: unknown[] = [], touches: Touch = 'any'): Promise<R[]> {
    return (await this.batch.query<R>(text, values, touches)).rows;
  }

  /** Rows as arrays of their values, in column order (`rowMode: 'array'`: no object per row). */
  async selectArrays(text: string, values: unknown[] = [], touches: Touch = 'any'): Promise<unknown[][]> {
    return (await this.batch.query<unknown[]>(text, values, touches, true)).rows;
  }

  /** Runs a statement and returns how many rows it changed. */
  async execute(text: string, values: unknown[] = [], touches: Touch = 'any'): Promise<number> {
    return (await this.batch.query(text, values, touches)).rowCount;
  }

  /**
   * A statement whose result this write does not need: sent with the batch's next round trip (it
   * still runs before anything issued after it). A statement that must fail the write when it
   * changes nothing raises an error itself (see `checkFence`).
   */
  later(text: string, values: unknown[] = [], touches: Touch = 'any'): Promise<void> {
    return this.batch.later(text, values, touches);
  }

  /** A statement whose rows the write reads only after COMMIT (return them through `afterCommit`). */
  laterQuery<R>(
    text: string,
    values: unknown[] = [],
    touches: Touch = 'any',
    arrays = false,
  ): Promise<Later<R>> {
    return this.batch.laterQuery<R>(text, values, touches, arrays);
  }

  /** Rows of a statement shared by many writes (merged-writes.ts); `footprint`: the runs they read or change. */
  laterRows(
    spec: RowStatement,
    rows: ReadonlyArray<readonly unknown[]>,
    footprint: readonly string[],
    touches: Touch,
  ): Promise<void> {
    return this.batch.laterRows(spec, rows, footprint, touches);
  }
}

/** A write's result computed once its batch has committed (from statements answered late: `laterQuery`). */
export class AfterCommit<T> {
  constructor(readonly get: () => T) {}
}

export type WriteOp<T> = (tx: Tx) => Promise<T | AfterCommit<T>>;
