/**
 * The message that ends a write batch: its COMMIT, and the wake-up hints that may ride after it.
 * In a batch's first try the statements still kept go in that message too, so a queued run is one
 * round trip (`commitKept`); a careful try sends COMMIT alone (`commit`).
 */
import pg from 'pg';
import type { BatchConn } from './batch-conn.ts';
import { isConnectionLoss } from './sql.ts';
import type { CommitHint } from './wakeups.ts';

/** The column of a hint's first row (wakeups.ts): it arrives only once the COMMIT before it succeeded. */
export const HINT_MARK = 'baton_hint';

/**
 * COMMIT, with the hints that ride after it in the same message (see wakeups.ts). The hints' first
 * row arrives only once the COMMIT has succeeded, so an error after it is the hint's alone: the
 * writes are kept, the hint is lost (other processes' polls still find the work), and a connection
 * lost meanwhile is marked broken (`broke`) so the pool drops it.
 */
export async function commit(
  client: pg.PoolClient,
  hint: CommitHint | undefined,
  broke: (error: Error) => void,
): Promise<void> {
  if (!hint) {
    await client.query('COMMIT');
    return;
  }
  let committed = false;
  try {
    await new Promise<void>((resolve, reject) => {
      const query = new pg.Query(`COMMIT;\n${hint.sql}`, undefined, (error: Error | undefined) =>
        error ? reject(error) : resolve(),
      );
      query.on('row', () => {
        committed = true;
      });
      client.query(query);
    });
    hint.settle(true);
  } catch (error) {
    hint.settle(false);
    if (!committed) throw error;
    if (isConnectionLoss(error)) broke(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * A first try's last message: the statements it still keeps, COMMIT, then the hints. Resolves once
 * committed (an error after the hint's first row is the hint's alone, as in `commit`). Throws when
 * the transaction may not have committed: a statement failed (nothing was kept: the server skipped
 * the rest of the message, COMMIT included), or the connection was lost before the answer — then
 * the transaction id the batch read with its BEGIN (`conn.xid`) settles it (write-queue.ts).
 */
export async function commitKept(
  conn: BatchConn,
  hint: CommitHint | undefined,
  broke: (error: Error) => void,
): Promise<void> {
  let committed = false;
  try {
    await conn.sendWith(hint ? `COMMIT;\n${hint.sql}` : 'COMMIT', (_row, fields) => {
      if (fields.some((f) => f.name === HINT_MARK)) committed = true;
    });
    hint?.settle(true);
  } catch (error) {
    hint?.settle(false);
    if (!committed) throw error;
    if (isConnectionLoss(error)) broke(error instanceof Error ? error : new Error(String(error)));
  }
}
