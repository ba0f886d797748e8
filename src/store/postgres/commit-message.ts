/** The message that ends a write batch: its COMMIT, and the wake-up hints that may ride after it. */
import pg from 'pg';
import { isConnectionLoss } from './sql.ts';
import type { CommitHint } from './wakeups.ts';

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
