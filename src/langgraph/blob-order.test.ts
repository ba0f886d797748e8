/**
 * Migration 0025: LangGraph channel values keyed by version before channel, so the values a step
 * writes share one leaf of the primary-key index. A file written before it upgrades without loss.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { BatonSaver } from './index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

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

/** The primary-key columns of langgraph_blobs, in index order. */
function blobKey(store: SqliteStore): string[] {
  const db = store.database;
  const pk = (
    db.prepare("PRAGMA index_list('langgraph_blobs')").all() as Array<{ name: string; origin: string }>
  ).find((i) => i.origin === 'pk');
  return (db.prepare(`PRAGMA index_info('${pk?.name}')`).all() as Array<{ name: string }>).map((c) => c.name);
}

/** The blobs table as migration 0018 created it, rows kept: a file from before 0025. */
function downgrade(store: SqliteStore): void {
  store.database.exec(`
    CREATE TABLE old_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, channel TEXT NOT NULL,
      version TEXT NOT NULL, type TEXT NOT NULL, value BLOB NOT NULL,
      PRIMARY KEY (thread_id, checkpoint_ns, channel, version)) STRICT;
    INSERT INTO old_blobs SELECT thread_id, checkpoint_ns, channel, version, type, value FROM langgraph_blobs;
    DROP TABLE langgraph_blobs;
    ALTER TABLE old_blobs RENAME TO langgraph_blobs;
    DELETE FROM baton_migrations WHERE version = 25;`);
}

const cfg = { configurable: { thread_id: 'kept' } };
const KEY = ['thread_id', 'checkpoint_ns', 'version', 'channel'];

describe('LangGraph values keyed by version (SQLite migration 0025)', () => {
  it('a new file keys values by version before channel', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lg-order-'));
    dirs.push(dir);
    const store = openSqliteStore(join(dir, 'baton.db'));
    expect(blobKey(store)).toEqual(KEY);
    await store.close();
  });

  it('upgrades a file written before it without losing a value, and the thread goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lg-order-'));
    dirs.push(dir);
    const path = join(dir, 'baton.db');
    const before = openSqliteStore(path);
    const graph = chain(5).compile({ checkpointer: new BatonSaver({ store: before }) });
    await graph.invoke({ items: ['start'] }, cfg);
    const state = await graph.getState(cfg);
    const history = [];
    for await (const s of graph.getStateHistory(cfg)) history.push(s.values);
    const rows = before.database.prepare('SELECT * FROM langgraph_blobs ORDER BY channel, version').all();
    downgrade(before);
    expect(blobKey(before)).toEqual(['thread_id', 'checkpoint_ns', 'channel', 'version']);
    await before.close();

    const after = openSqliteStore(path);
    expect(blobKey(after)).toEqual(KEY);
    expect(after.database.prepare('SELECT * FROM langgraph_blobs ORDER BY channel, version').all()).toEqual(
      rows,
    );
    const again = chain(5).compile({ checkpointer: new BatonSaver({ store: after }) });
    expect((await again.getState(cfg)).values).toEqual(state.values);
    const read = [];
    for await (const s of again.getStateHistory(cfg)) read.push(s.values);
    expect(read).toEqual(history);
    const more = await again.invoke({ items: ['more'] }, cfg);
    expect(more.items).toHaveLength(12);
    expect(more.note).toBe('at 4');
    await after.close();
  });
});
