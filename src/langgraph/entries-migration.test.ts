/**
 * Migration 0026: LangGraph checkpoints, writes and values in one SQLite table. A file written before
 * it (three tables) upgrades without losing a checkpoint, a pending write or a value, and its threads
 * go on; every statement reaches the table through one of its two partial indexes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { ENTRY_SQL } from '../store/sqlite/langgraph-entries-sql.ts';
import { BatonSaver } from './index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lg-entries-'));
  dirs.push(dir);
  return join(dir, 'baton.db');
}

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  note: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
});
function chain(steps: number) {
  const g = new StateGraph(State) as unknown as StateGraph<
    typeof State.spec,
    typeof State.State,
    typeof State.Update,
    string
  >;
  for (let i = 0; i < steps; i++) g.addNode(`n${i}`, () => ({ items: [`item-${i}`], note: `at ${i}` }));
  g.addEdge(START, 'n0');
  for (let i = 1; i < steps; i++) g.addEdge(`n${i - 1}`, `n${i}`);
  g.addEdge(`n${steps - 1}`, END);
  return g;
}

/** The tables as migrations 0018, 0022 and 0025 left them, rows kept: a file from before 0026. */
function downgrade(store: SqliteStore): void {
  store.database.exec(`
    CREATE TABLE langgraph_checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL,
      checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT NOT NULL, checkpoint BLOB NOT NULL,
      metadata_type TEXT NOT NULL, metadata BLOB NOT NULL, channel_versions TEXT NOT NULL, step INTEGER,
      source TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)) STRICT;
    CREATE TABLE langgraph_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL,
      checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, task_path TEXT NOT NULL DEFAULT '',
      channel TEXT NOT NULL, type TEXT NOT NULL, value BLOB NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)) STRICT;
    CREATE TABLE langgraph_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, channel TEXT NOT NULL,
      version TEXT NOT NULL, type TEXT NOT NULL, value BLOB NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, version, channel)) STRICT;
    INSERT INTO langgraph_checkpoints SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
      value, metadata_type, metadata, channel_versions, step, source, created_at FROM langgraph_entries WHERE kind = 0;
    INSERT INTO langgraph_writes SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel,
      type, value FROM langgraph_entries WHERE kind = 1;
    INSERT INTO langgraph_blobs SELECT thread_id, checkpoint_ns, channel, version, type, value
      FROM langgraph_entries WHERE kind = 2;
    DROP TABLE langgraph_entries;
    DELETE FROM baton_migrations WHERE version = 26;`);
}

const tables = (store: SqliteStore) =>
  (
    store.database
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'langgraph%' ORDER BY name")
      .pluck()
      .all() as string[]
  ).join(' ');

describe('LangGraph rows in one table (SQLite migration 0026)', () => {
  it('a new file has one table for checkpoints, writes and values', async () => {
    const store = openSqliteStore(tempPath());
    expect(tables(store)).toBe('langgraph_entries langgraph_threads');
    await store.close();
  });

  it('upgrades a file written before it without losing a row, and its threads go on', async () => {
    const path = tempPath();
    const before = openSqliteStore(path);
    const saver = new BatonSaver({ store: before });
    const graph = chain(5).compile({ checkpointer: saver });
    const cfg = { configurable: { thread_id: 'kept' } };
    await graph.invoke({ items: ['start'] }, cfg);
    // Pending writes too: a run stopped before its last node keeps the writes of the node it ran.
    await chain(3)
      .compile({ checkpointer: saver, interruptBefore: ['n2'] })
      .invoke({ items: ['x'] }, { configurable: { thread_id: 'stopped' } });
    const tuples = async (s: BatonSaver, thread: string) => {
      const out = [];
      for await (const t of s.list({ configurable: { thread_id: thread } })) out.push(t);
      return out;
    };
    const kept = await tuples(saver, 'kept');
    const stopped = await tuples(saver, 'stopped');
    expect(stopped.some((t) => (t.pendingWrites ?? []).length > 0)).toBe(true);
    const threads = await saver.listThreads();
    const rows = before.database.prepare('SELECT count(*) FROM langgraph_entries').pluck().get() as number;
    downgrade(before);
    expect(tables(before)).toBe('langgraph_blobs langgraph_checkpoints langgraph_threads langgraph_writes');
    await before.close();

    const after = openSqliteStore(path);
    expect(tables(after)).toBe('langgraph_entries langgraph_threads');
    expect(after.database.prepare('SELECT count(*) FROM langgraph_entries').pluck().get()).toBe(rows);
    const again = new BatonSaver({ store: after });
    expect(await tuples(again, 'kept')).toEqual(kept);
    expect(await tuples(again, 'stopped')).toEqual(stopped);
    expect(await again.listThreads()).toEqual(threads);
    const more = await chain(5)
      .compile({ checkpointer: again })
      .invoke({ items: ['more'] }, cfg);
    expect(more.items).toHaveLength(12);
    expect(more.note).toBe('at 4');
    await after.close();
  });

  it('reaches the table through its indexes, never by scanning it', async () => {
    const store = openSqliteStore(tempPath());
    const plan = (sql: string) =>
      (
        store.database
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...Array.from(sql.matchAll(/\?/g), () => null)) as Array<{ detail: string }>
      )
        .map((r) => r.detail)
        .join('; ');
    const statements = [
      ENTRY_SQL.latestCheckpoint,
      ENTRY_SQL.checkpointById,
      ENTRY_SQL.valuesOf,
      ENTRY_SQL.writesOf,
      ENTRY_SQL.hasCheckpoints,
      ENTRY_SQL.oldestKept,
      ENTRY_SQL.entriesBefore,
      ENTRY_SQL.collectValues,
      ENTRY_SQL.copyEntries,
      ENTRY_SQL.getThread,
      ...ENTRY_SQL.deleteThread,
    ];
    for (const sql of statements) {
      const p = plan(sql);
      // json_each (j) is walked; the table never is, nor only through a prefix of the values key.
      expect(p, sql).not.toMatch(/SCAN (langgraph_entries|[cekmw])\b(?! USING)/);
      expect(p, sql).not.toMatch(/langgraph_entries_values \(thread_id=\? AND checkpoint_ns=\?\)/);
    }
    await store.close();
  });
});
