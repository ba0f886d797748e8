/**
 * Durability off the event loop. The store's connection runs at synchronous=NORMAL, so in WAL mode a
 * COMMIT only write()s its frames to the `-wal` file; this module then fdatasyncs that file on
 * libuv's thread pool, and the write queue resolves a batch's callers only once a sync that started
 * after its COMMIT has finished. The WAL is append-only between checkpoints, so one sync covers
 * every earlier commit. Checkpoints stay SQLite's own at NORMAL: they sync the WAL before copying it
 * into the database file and the database file before the WAL can be reused (see ARCHITECTURE,
 * "Durable commits off the event loop").
 *
 * Only the `-wal` file is opened here, never the database or `-shm` file: closing any descriptor of
 * a file drops every POSIX lock this process holds on it, and SQLite keeps its locks on those two.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';
import type { SqliteDatabase } from './driver.ts';

/** Makes every commit made so far on this connection survive power loss. */
export interface DurableSync {
  sync(): Promise<void>;
  close(): void;
}

/** For `:memory:` databases and synchronous=NORMAL: a commit is as durable as it will get. */
export const noSync: DurableSync = {
  sync: () => Promise.resolve(),
  close: () => {},
};

/**
 * The database file as SQLite resolved it, which may differ from the path Baton was given (relative,
 * symlinked); SQLite names the WAL after it. Empty for `:memory:`.
 */
export function databaseFile(db: SqliteDatabase): string {
  const main = (db.pragma('database_list') as Array<{ name: string; file: string }>).find(
    (d) => d.name === 'main',
  );
  return main?.file ?? '';
}

/** fdatasync of the connection's `-wal` file, opened on first use (it exists once anything committed). */
export function walSync(db: SqliteDatabase): DurableSync {
  const file = databaseFile(db);
  if (!file) return noSync;
  const path = `${file}-wal`;
  let fd: number | undefined;
  const open = () => {
    fd ??= openSync(path, 'r+');
    return fd;
  };
  return {
    sync: () =>
      new Promise<void>((resolve, reject) => {
        let handle: number;
        try {
          handle = open();
        } catch (err) {
          reject(err);
          return;
        }
        fdatasync(handle, (err) => (err ? reject(err) : resolve()));
      }),
    close: () => {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
