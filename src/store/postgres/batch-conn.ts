/**
 * One write batch's view of its connection: how the batch's statements reach the server in as few
 * round trips as possible. A no-op run used to cost about seven statements, each its own round trip
 * on one connection, one transaction at a time: the store waited on the socket, and both Node and
 * the server spent their CPU on per-statement overhead (issue 13).
 *
 * In a batch's first try (`fast`), a statement whose result the write does not need before it ends
 * (`later`: an UPDATE it applies, an INSERT, a fence check that raises when it fails) is not sent
 * at once but kept, and goes out with the next statement whose rows are needed, in the same round
 * trip: one simple-protocol message holding several statements, executed in order in the batch's
 * transaction, exactly as if they had been sent one by one. A failure anywhere rolls the batch back
 * and the write queue runs it again `careful`ly: every statement sent at once, one savepoint per
 * write, so the failing write is found and rolls back alone with the error it has always had.
 *
 * A multi-statement message cannot carry bind parameters, so values are written into the text as
 * literals (`literal`): quoted strings, which the server types from their context exactly as it types
 * an untyped parameter (node-postgres sends every parameter as untyped text too).
 *
 * The batch also keeps the rows it has locked (`locked`), so that the transitions of a batch lock
 * their runs in one statement (see `lockRunTree`), and forgets a row as soon as a statement of the
 * batch may have changed it (`Touch`).
 */
import pg from 'pg';
import type { RunRecord } from '../records.ts';
import { objectRows, PG_TYPES } from './sql.ts';

/** The column of the statement that reports a first try's transaction id (see `begin`). */
const XID_COLUMN = 'baton_xid';

/**
 * Which rows of `runs` a statement may change, so that the rows the batch locked earlier are read
 * again when stale: 'none' (a read, a row lock, another table, or only `updated_at`, which every
 * transition sets again), the ids it changes, 'claimable' (a claim: any queued or timer-waiting
 * run), or 'any' (the default: everything locked so far is read again).
 */
export type Touch = 'none' | 'any' | 'claimable' | readonly string[];

/** A run as this batch locked it, with whether it had children then. */
export interface LockedRun {
  run: RunRecord;
  hasChildren: boolean;
  /** The claim that gave its lease (Fence.claim), null when none was named. */
  leaseClaim: string | null;
}

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** Called with each row of a message as it arrives: its values, in the order of its columns. */
export type RowListener = (row: readonly unknown[], fields: readonly pg.FieldDef[]) => void;

/** A statement written once for many rows (see merged-writes.ts): its shape's key, and how to render it. */
export interface RowStatement {
  readonly key: string;
  render(rows: readonly (readonly unknown[])[]): { text: string; values: unknown[] };
}

/** The rows of a kept statement, filled in when its round trip answers (before the batch commits). */
export class Later<R> {
  rows: R[] = [];
  rowCount = 0;
}

/** A statement kept for the next round trip. */
interface Kept {
  /** Where its answer goes, when a write wants it. */
  result?: Later<unknown>;
  /** Rendered SQL, or a row statement with the rows gathered so far. */
  text?: string;
  spec?: RowStatement;
  rows: Array<readonly unknown[]>;
  /** The runs it reads or changes; undefined: unknown (no statement is moved across it). */
  footprint: Set<string> | undefined;
  /** Its rows as arrays of values (`rowMode: 'array'`), not objects. */
  arrays?: boolean;
}

export class BatchConn {
  /** Statements kept for the next round trip. */
  private kept: Kept[] = [];
  private readonly lockedRuns = new Map<string, LockedRun>();
  /**
   * The transaction's id (txid_current, as text) once a round trip has answered it: in a first
   * try it is asked for with BEGIN, so that a last message lost with its connection can be settled
   * (commit-message.ts). Read from the row as it arrives, even when the message then fails.
   */
  xid: string | undefined;

  constructor(
    readonly client: pg.PoolClient,
    /** Keep statements for the next round trip (the batch's first try); else send each at once. */
    readonly fast: boolean,
    /** Runs that writes later in this batch will lock (see PgWriteQueue.run). */
    readonly upcomingLocks: () => string[],
  ) {}

  /**
   * Starts the transaction: BEGIN, and in a first try the transaction's id right after it, both
   * kept for the first round trip (an id is assigned now rather than at the first write; every
   * batch writes).
   */
  async begin(): Promise<void> {
    await this.later('BEGIN', [], 'none');
    if (this.fast)
      this.kept.push({ text: `SELECT txid_current() AS ${XID_COLUMN}`, rows: [], footprint: undefined });
  }

  /**
   * Sends whatever was kept and then `tail` (COMMIT and what follows it), all in one message; its
   * rows reach `onRow` as they arrive (values, and their columns). Kept statements' results are
   * filled in when it succeeds.
   */
  async sendWith(tail: string, onRow: RowListener): Promise<void> {
    const kept = this.kept;
    this.kept = [];
    const results = await this.send([...this.render(kept), tail].join(';\n'), onRow);
    this.fill(kept, results);
  }

  /**
   * Sends a statement (with whatever was kept) and returns its rows: objects, or with `arrays` each
   * row's values in column order (`rowMode: 'array'`).
   */
  async query<R>(
    text: string,
    values: readonly unknown[],
    touches: Touch,
    arrays = false,
  ): Promise<QueryResult<R>> {
    this.touch(touches);
    if (this.kept.length === 0) {
      const result = await this.client.query({
        text,
        values: values as unknown[],
        types: PG_TYPES,
        ...(arrays ? { rowMode: 'array' as const } : {}),
      });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    }
    this.kept.push({ text: renderLiterals(text, values), rows: [], footprint: undefined });
    const result = await this.sendKept();
    if (!result) return { rows: [], rowCount: 0 };
    return { rows: (arrays ? result.rows : objectRows(result)) as R[], rowCount: result.rowCount ?? 0 };
  }

  /** A statement whose result is not needed: kept for the next round trip, or sent now when careful. */
  async later(text: string, values: readonly unknown[], touches: Touch): Promise<void> {
    if (!this.fast) {
      await this.query(text, values, touches);
      return;
    }
    this.touch(touches);
    this.kept.push({ text: renderLiterals(text, values), rows: [], footprint: undefined });
  }

  /**
   * A statement whose rows the write needs only once the batch has committed (a claim: the runs it
   * returns): kept like `later`, its rows are in the handle after the round trip that carries it.
   */
  async laterQuery<R>(
    text: string,
    values: readonly unknown[],
    touches: Touch,
    arrays = false,
  ): Promise<Later<R>> {
    const later = new Later<R>();
    if (!this.fast) {
      Object.assign(later, await this.query<R>(text, values, touches, arrays));
      return later;
    }
    this.touch(touches);
    this.kept.push({
      text: renderLiterals(text, values),
      rows: [],
      footprint: undefined,
      result: later as Later<unknown>,
      arrays,
    });
    return later;
  }

  /**
   * Rows of a row statement (`footprint`: every run they read or change). Kept, they join the
   * latest kept statement of the same shape when no statement kept since (nor that one) may touch
   * the same runs: moving them there changes nothing another statement sees. Else a new one.
   */
  async laterRows(
    spec: RowStatement,
    rows: ReadonlyArray<readonly unknown[]>,
    footprint: readonly string[],
    touches: Touch,
  ): Promise<void> {
    if (!this.fast) {
      const { text, values } = spec.render(rows);
      await this.query(text, values, touches);
      return;
    }
    this.touch(touches);
    for (let i = this.kept.length - 1; i >= 0; i--) {
      const k = this.kept[i] as Kept;
      if (k.footprint === undefined || footprint.some((id) => k.footprint?.has(id))) break;
      if (k.spec === spec) {
        k.rows.push(...rows);
        for (const id of footprint) k.footprint.add(id);
        return;
      }
    }
    this.kept.push({ spec, rows: [...rows], footprint: new Set(footprint) });
  }

  /** Sends whatever was kept (before COMMIT: the server must have run it all first). */
  async flush(): Promise<void> {
    if (this.kept.length > 0) await this.sendKept();
  }

  /** The run as this batch locked it, unless a statement since may have changed it. */
  locked(runId: string): LockedRun | undefined {
    return this.lockedRuns.get(runId);
  }

  rememberLocked(row: LockedRun): void {
    this.lockedRuns.set(row.run.id, row);
  }

  private async sendKept(): Promise<pg.QueryResult | undefined> {
    const kept = this.kept;
    this.kept = [];
    const results = await this.send(this.render(kept).join(';\n'));
    this.fill(kept, results);
    // The last statement was the one asked for.
    return results.at(-1);
  }

  private render(kept: readonly Kept[]): string[] {
    return kept.map((k) => {
      if (k.text !== undefined) return k.text;
      const { text, values } = (k.spec as RowStatement).render(k.rows);
      return renderLiterals(text, values);
    });
  }

  /** Several statements answer with one result each, in order (rows as arrays: see `send`). */
  private fill(kept: readonly Kept[], results: readonly pg.QueryResult[]): void {
    kept.forEach((k, i) => {
      if (!k.result) return;
      const result = results[i];
      k.result.rows = result === undefined ? [] : k.arrays ? result.rows : objectRows(result);
      k.result.rowCount = result?.rowCount ?? 0;
    });
  }

  /**
   * One simple-protocol message; the transaction id is taken from its row the moment it arrives.
   * Rows come as arrays (one query's row mode holds for all its statements); a statement whose
   * writer wants objects gets them made from its columns (`objectRows`), as node-postgres would.
   */
  private send(text: string, onRow?: RowListener): Promise<pg.QueryResult[]> {
    return new Promise((resolve, reject) => {
      const query = new pg.Query(
        // A QueryArrayConfig; node-postgres's types give its Query constructor only QueryConfig.
        { text, types: PG_TYPES, rowMode: 'array' } as pg.QueryConfig,
        undefined,
        (error: Error | undefined, answer: pg.QueryResult | pg.QueryResult[]) => {
          if (error) reject(error);
          else resolve(Array.isArray(answer) ? answer : [answer]);
        },
      );
      const watchXid = this.xid === undefined && this.fast;
      if (watchXid || onRow)
        query.on('row', (row: unknown[], result?: pg.ResultBuilder) => {
          const fields = result?.fields ?? [];
          if (watchXid && fields[0]?.name === XID_COLUMN) this.xid = String(row[0]);
          onRow?.(row, fields);
        });
      this.client.query(query);
    });
  }

  private touch(touches: Touch): void {
    if (touches === 'none' || this.lockedRuns.size === 0) return;
    if (touches === 'any') this.lockedRuns.clear();
    else if (touches === 'claimable') {
      for (const [id, { run }] of this.lockedRuns)
        if (run.status === 'queued' || (run.status === 'waiting' && run.waitReason === 'timer'))
          this.lockedRuns.delete(id);
    } else for (const id of touches) this.lockedRuns.delete(id);
  }
}

/** A value written into SQL text: what node-postgres would have sent as an untyped text parameter. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return quote(typeof value === 'string' ? value : paramText(value));
}

function paramText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'object':
      if (Array.isArray(value)) return arrayText(value);
      // bytea's hex input format (node-postgres sends a Buffer as binary; the column reads the same).
      if (value instanceof Uint8Array)
        return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
      return JSON.stringify(value);
    default:
      throw new TypeError(`cannot send a ${typeof value} to Postgres`);
  }
}

/** An array literal, as node-postgres writes one (`{"a","b",NULL}`). */
function arrayText(values: readonly unknown[]): string {
  // A loop, and JSON.stringify to escape an item: with map, a template and two replaceAll per item,
  // rendering took ~40 µs of Node CPU per no-op run at c10 (the events' JSON is mostly quotes).
  // A column of a merged statement often repeats one value (the lease owner, the status): an item
  // equal to the one before is written as it was.
  let out = '{';
  let last: unknown;
  let lastText = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (i > 0 && v === last) out += lastText;
    else {
      lastText = Array.isArray(v) ? arrayText(v) : arrayItem(paramText(v));
      last = v;
      out += lastText;
    }
  }
  return `${out}}`;
}

/**
 * An array item, in double quotes with `"` and `\` escaped by a backslash. JSON.stringify writes
 * exactly that (natively) unless the text holds a control character or a lone surrogate, which it
 * would write as an escape the array parser reads differently.
 */
function arrayItem(text: string): string {
  return JSON_WOULD_ESCAPE.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : JSON.stringify(text);
}

const JSON_WOULD_ESCAPE = /[\u0000-\u001f\ud800-\udfff]/;

/**
 * A string constant whatever standard_conforming_strings says. A text with a quote or a backslash
 * (every array of JSON) is dollar-quoted when it holds no `$` at all, so no tag can end it early:
 * the same untyped constant, without a pass over the text doubling each quote and backslash.
 * Otherwise E'' (backslashes doubled) when needed.
 */
function quote(text: string): string {
  const quotes = text.includes("'");
  const backslashes = text.includes('\\');
  if (!quotes && !backslashes) return `'${text}'`;
  // A space first: `$` may continue an identifier, and the tag must start a token.
  if (!text.includes('$')) return ` $b$${text}$b$`;
  const quoted = quotes ? text.replaceAll("'", "''") : text;
  return backslashes ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * `text` with each `$n` replaced by the literal of `values[n - 1]`. The statements are the store's
 * own: `$` appears in them only as a parameter, never inside a string or a dollar quote.
 */
export function renderLiterals(text: string, values: readonly unknown[]): string {
  if (values.length === 0) return text;
  // A value named twice (the lock's ids, its own and its roots') is rendered once.
  const rendered: (string | undefined)[] = new Array(values.length);
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= values.length) throw new RangeError(`statement has no value for $${n}`);
    let out = rendered[i];
    if (out === undefined) {
      out = literal(values[i]);
      rendered[i] = out;
    }
    return out;
  });
}
