/**
 * What a LangGraph step costs the SQLite store in statements (issue 17 item 4): every statement the
 * store executes is logged by wrapping the driver's `prepare`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { afterEach, describe, expect, it } from 'vitest';
import { logStatements } from '../../test/statement-log.ts';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { BatonSaver } from './index.ts';

const { executed, count } = logStatements();

const dirs: string[] = [];
const stores: SqliteStore[] = [];
function tempStore(): SqliteStore {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lg-cost-'));
  dirs.push(dir);
  const store = openSqliteStore(join(dir, 'baton.db'), { synchronous: 'NORMAL' });
  stores.push(store);
  return store;
}
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const State = Annotation.Root({
  count: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
});
function chain(steps: number) {
  const g = new StateGraph(State) as unknown as StateGraph<
    typeof State.spec,
    typeof State.State,
    typeof State.Update,
    string
  >;
  for (let i = 0; i < steps; i++) g.addNode(`n${i}`, (s: typeof State.State) => ({ count: s.count + 1 }));
  g.addEdge(START, 'n0');
  for (let i = 1; i < steps; i++) g.addEdge(`n${i - 1}`, `n${i}`);
  g.addEdge(`n${steps - 1}`, END);
  return g;
}

describe('statements per LangGraph step (SQLite)', () => {
  it('touches the thread once per commit, not once per put and once per putWrites', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store, ttl: '1h' });
    const graph = chain(20).compile({ checkpointer: saver });
    executed.length = 0;
    const before = store.commitStats.commits;
    const out = await graph.invoke({ count: 0 }, { configurable: { thread_id: 't' }, durability: 'sync' });
    expect(out.count).toBe(20);
    // One table (migration 0026): a put is one statement with its values, a task's writes another.
    const puts = count(/^INSERT INTO langgraph_entries .* VALUES \(\?, \?, 0,/);
    const writes = count(/^INSERT INTO langgraph_entries .* VALUES \(\?, \?, 1,/);
    expect(puts).toBe(22);
    expect(writes).toBeGreaterThanOrEqual(20);
    expect(count(/^INSERT INTO langgraph_entries /)).toBe(puts + writes);
    // A step's writes and checkpoint share a commit; the thread is touched once in it.
    expect(count(/^INSERT INTO langgraph_threads /)).toBe(store.commitStats.commits - before);
    expect(store.commitStats.commits - before).toBeLessThan(puts + writes);
  });

  it('a write after the thread was deleted in the same transaction inserts the thread again', async () => {
    const store = tempStore();
    const graphs = store.langgraph;
    const row = (id: string) => ({
      threadId: 'd',
      ns: '',
      checkpointId: id,
      parentCheckpointId: null,
      type: 'json',
      checkpoint: Buffer.from('{}'),
      metadataType: 'json',
      metadata: Buffer.from('{}'),
      channelVersions: {},
      step: 0,
      source: 'input',
    });
    await graphs.putCheckpoint(row('c1'), [], {});
    const commits = store.commitStats.commits;
    // Issued in one turn: one transaction, in this order.
    const key = { threadId: 'd', ns: '', checkpointId: 'c1' };
    const w = { taskId: 't', taskPath: '', idx: 0, channel: 'x', type: 'json', value: Buffer.from('1') };
    await Promise.all([
      graphs.putWrites(key, [w], false, {}),
      graphs.deleteThread('d'),
      graphs.putCheckpoint(row('c2'), [], {}),
    ]);
    expect(store.commitStats.commits).toBe(commits + 1);
    expect(await graphs.getThread('d')).toMatchObject({ threadId: 'd', checkpoints: 1 });
  });
});
