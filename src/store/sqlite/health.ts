/** What the SQLite store reports on `/health` and `/metrics` (the figures are pure: tested without a file). */
import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import type { StoreHealth } from '../store.ts';
import { databaseFile } from './wal-sync.ts';
import { DEFAULT_SLICE_MS } from './write-queue.ts';

/**
 * Past this the WAL is not being folded back: the checkpointer catches up at ≈ 8 MB (CATCH_UP_FRAMES),
 * so a WAL this large means a reader (a long query, another process's open transaction) keeps
 * checkpoints from finishing, and every read gets slower as it grows.
 */
export const WAL_WARNING_BYTES = 64 * 1_048_576;

export interface SqliteFigures {
  commits: number;
  syncs: number;
  checkpoints: { offLoop: number; held: number };
  holds: { lastMs: number; maxMs: number; overSlice: number };
  sweeps: { sweeps: number; heldLastMs: number; heldMaxMs: number };
}

const CHECKPOINTS_HELP =
  'WAL checkpoints run off the event loop since the store opened, by whether they held the writes to catch up.';

/** The write-ahead log's size in bytes; 0 for a memory database or before anything was committed. */
export function walBytes(db: Database.Database): number {
  if (db.memory) return 0;
  try {
    return statSync(`${databaseFile(db)}-wal`).size;
  } catch {
    // No WAL file (rollback journal, or nothing committed yet).
    return 0;
  }
}

export function sqliteHealth(figures: SqliteFigures, walBytes: number): StoreHealth {
  const warnings =
    walBytes > WAL_WARNING_BYTES
      ? [
          {
            code: 'wal_large',
            message: `the write-ahead log is ${Math.round(walBytes / 1_048_576)} MB (checkpoints keep it near 8 MB): a reader that stays open is keeping checkpoints from finishing`,
          },
        ]
      : [];
  const ms = (v: number) => Math.round(v * 1_000) / 1_000;
  return {
    warnings,
    gauges: [
      {
        name: 'baton_sqlite_write_hold_max_ms',
        help: 'Longest a write transaction held the event loop since the store opened (BEGIN to COMMIT, ms).',
        value: ms(figures.holds.maxMs),
      },
      {
        name: 'baton_sqlite_write_hold_last_ms',
        help: 'How long the last write transaction held the event loop (ms).',
        value: ms(figures.holds.lastMs),
      },
      {
        name: 'baton_sqlite_write_holds_over_slice',
        help: `Write transactions that held the event loop longer than the write slice (${DEFAULT_SLICE_MS} ms) since the store opened.`,
        value: figures.holds.overSlice,
      },
      {
        name: 'baton_sqlite_commits',
        help: 'Transactions committed since the store opened.',
        value: figures.commits,
      },
      {
        name: 'baton_sqlite_wal_syncs',
        help: 'fdatasyncs of the write-ahead log since the store opened (one covers every commit before it).',
        value: figures.syncs,
      },
      {
        name: 'baton_sqlite_checkpoints',
        help: CHECKPOINTS_HELP,
        value: figures.checkpoints.offLoop - figures.checkpoints.held,
        labels: { held: 'no' },
      },
      {
        name: 'baton_sqlite_checkpoints',
        help: CHECKPOINTS_HELP,
        value: figures.checkpoints.held,
        labels: { held: 'yes' },
      },
      {
        name: 'baton_sqlite_sweeps',
        help: 'TTL sweeps run on the sweeper thread since the store opened (the event loop is not held by them).',
        value: figures.sweeps.sweeps,
      },
      {
        name: 'baton_sqlite_sweep_writes_held_max_ms',
        help: "Longest the store's writes waited for one sweep on the sweeper thread since the store opened (ms).",
        value: ms(figures.sweeps.heldMaxMs),
      },
      { name: 'baton_sqlite_wal_bytes', help: 'Size of the write-ahead log file (bytes).', value: walBytes },
    ],
  };
}
