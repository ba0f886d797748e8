/**
 * BatonSaver beyond the official suite: real LangGraph graphs on real SQLite files, retention (TTL
 * on the store's clock, keep-latest pruning, delete, copy, prune), atomic writes, bad input.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { JsonPlusSerializer, uuid6 } from '@langchain/langgraph-checkpoint';
import { afterEach, describe, expect, it } from 'vitest';
import { BatonError } from '../core/index.ts';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { THREAD_REFRESH_MS } from '../store/langgraph-sql.ts';
import { ManualClock } from '../time/index.ts';
import { BatonSaver } from './index.ts';

const dirs: string[] = [];
const stores: SqliteStore[] = [];
function tempStore(clock = new ManualClock()): SqliteStore {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lg-'));
  dirs.push(dir);
  const store = openSqliteStore(join(dir, 'baton.db'), { clock });
  stores.push(store);
  return store;
}
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  count: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
});

/** A chain of `steps` nodes, each appending one item and counting. */
function chain(steps: number) {
  const g = new StateGraph(State);
  for (let i = 0; i < steps; i++)
    g.addNode(`n${i}`, (s: typeof State.State) => ({ items: [`item-${i}`], count: s.count + 1 }));
  const builder = g as unknown as StateGraph<
    typeof State.spec,
    typeof State.State,
    typeof State.Update,
    string
  >;
  builder.addEdge(START, 'n0');
  for (let i = 1; i < steps; i++) builder.addEdge(`n${i - 1}`, `n${i}`);
  builder.addEdge(`n${steps - 1}`, END);
  return builder;
}

const cfg = (thread: string) => ({ configurable: { thread_id: thread } });

describe('BatonSaver with a real graph', () => {
  it('keeps state across invocations and saves a checkpoint per step', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    const graph = chain(4).compile({ checkpointer: saver });
    const first = await graph.invoke({ items: ['start'] }, cfg('t1'));
    expect(first.items).toEqual(['start', 'item-0', 'item-1', 'item-2', 'item-3']);
    const second = await graph.invoke({ items: ['again'] }, cfg('t1'));
    expect(second.count).toBe(8);
    expect(second.items).toHaveLength(10);
    const history = [];
    for await (const snap of graph.getStateHistory(cfg('t1'))) history.push(snap);
    // Per invocation: the input checkpoint, then one per superstep (the start and 4 nodes).
    expect(history).toHaveLength(12);
    expect(history[0]?.metadata).toMatchObject({ step: 10, source: 'loop' });
    const thread = await saver.getThread('t1');
    expect(thread).toMatchObject({ threadId: 't1', checkpoints: 12, lastStep: 10, lastSource: 'loop' });
  });

  it('survives reopening the file and resumes an interrupted thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lg-'));
    dirs.push(dir);
    const path = join(dir, 'baton.db');
    const build = (saver: BatonSaver) =>
      new StateGraph(State)
        .addNode('ask', () => ({ items: [String(interrupt('approve?'))] }))
        .addNode('after', (s: typeof State.State) => ({ count: s.items.length }))
        .addEdge(START, 'ask')
        .addEdge('ask', 'after')
        .addEdge('after', END)
        .compile({ checkpointer: saver });
    const a = new BatonSaver({ store: path });
    const paused = await build(a).invoke({ items: ['x'] }, cfg('approval'));
    expect((paused as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toBe(
      'approve?',
    );
    await a.close();
    const b = new BatonSaver({ store: path });
    const done = await build(b).invoke(new Command({ resume: 'yes' }), cfg('approval'));
    expect(done).toMatchObject({ items: ['x', 'yes'], count: 2 });
    await b.close();
  });

  it('stores an unchanged channel once, not in every checkpoint', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    const big = 'x'.repeat(50_000);
    const S = Annotation.Root({
      doc: Annotation<string>({ reducer: (_a, b) => b, default: () => '' }),
      n: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
    });
    const g = new StateGraph(S)
      .addNode('a', (s: typeof S.State) => ({ n: s.n + 1 }))
      .addNode('b', (s: typeof S.State) => ({ n: s.n + 1 }))
      .addNode('c', (s: typeof S.State) => ({ n: s.n + 1 }))
      .addEdge(START, 'a')
      .addEdge('a', 'b')
      .addEdge('b', 'c')
      .addEdge('c', END)
      .compile({ checkpointer: saver });
    await g.invoke({ doc: big }, cfg('doc'));
    const bytes = store.database
      .prepare(
        "SELECT sum(length(value)) FROM langgraph_entries WHERE thread_id = 'doc' AND kind = 2 AND channel = 'doc'",
      )
      .pluck()
      .get() as number;
    expect(bytes).toBeGreaterThan(50_000);
    expect(bytes).toBeLessThan(2 * 50_000);
    expect((await g.getState(cfg('doc'))).values).toEqual({ doc: big, n: 3 });
  });

  it('stores the channel versions once (the row), and reads rows that also kept them in the checkpoint', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    await chain(3).compile({ checkpointer: saver }).invoke({ items: [] }, cfg('v'));
    const latest = await saver.getTuple(cfg('v'));
    expect(Object.keys(latest?.checkpoint.channel_versions ?? {})).toEqual(
      expect.arrayContaining(['items', 'count']),
    );
    const row = store.database
      .prepare(
        "SELECT value AS checkpoint, channel_versions FROM langgraph_entries WHERE thread_id = 'v' AND kind = 0 LIMIT 1",
      )
      .get() as { checkpoint: Buffer; channel_versions: string };
    expect(JSON.parse(row.checkpoint.toString())).not.toHaveProperty('channel_versions');
    // A row as saved before: the versions in the serialized checkpoint too.
    const json = new JsonPlusSerializer();
    const id = uuid6(-1);
    const versions = { items: 7, count: 7 };
    const [type, bytes] = await json.dumpsTyped({
      v: 4,
      id,
      ts: new Date(0).toISOString(),
      channel_values: {},
      channel_versions: versions,
      versions_seen: {},
    });
    const [, metadata] = await json.dumpsTyped({ source: 'loop', step: 9, parents: {} });
    await saver.store.putCheckpoint(
      {
        threadId: 'old',
        ns: '',
        checkpointId: id,
        parentCheckpointId: null,
        type,
        checkpoint: bytes,
        metadataType: 'json',
        metadata,
        channelVersions: versions,
        step: 9,
        source: 'loop',
      },
      [
        { channel: 'items', version: '7', type: 'json', value: (await json.dumpsTyped(['a']))[1] },
        { channel: 'count', version: '7', type: 'json', value: (await json.dumpsTyped(1))[1] },
      ],
      {},
    );
    const old = await saver.getTuple(cfg('old'));
    expect(old?.checkpoint.channel_versions).toEqual(versions);
    expect(old?.checkpoint.channel_values).toEqual({ items: ['a'], count: 1 });
  });
});

describe('retention', () => {
  it('keepLatest keeps the newest N checkpoints per namespace and drops their writes and values', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store, keepLatest: 2 });
    const graph = chain(6).compile({ checkpointer: saver });
    const out = await graph.invoke({ items: [] }, cfg('k'));
    expect(out.count).toBe(6);
    const ids = [];
    for await (const t of saver.list(cfg('k'))) ids.push(t.metadata?.step);
    expect(ids).toEqual([6, 5]);
    const db = store.database;
    const orphanWrites = db
      .prepare(
        `SELECT count(*) FROM langgraph_entries w WHERE w.kind = 1 AND NOT EXISTS (SELECT 1 FROM langgraph_entries c
         WHERE c.kind = 0 AND c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns
         AND c.checkpoint_id = w.checkpoint_id)`,
      )
      .pluck()
      .get();
    expect(orphanWrites).toBe(0);
    // Only the values the two remaining checkpoints read are left.
    const blobs = db
      .prepare("SELECT count(*) FROM langgraph_entries WHERE thread_id = 'k' AND kind = 2")
      .pluck()
      .get() as number;
    const read = db
      .prepare(
        `SELECT count(*) FROM (SELECT DISTINCT j.key, CAST(j.value AS TEXT) FROM langgraph_entries c,
         json_each(c.channel_versions) j WHERE c.thread_id = 'k' AND c.kind = 0)`,
      )
      .pluck()
      .get() as number;
    expect(blobs).toBeGreaterThan(0);
    expect(blobs).toBeLessThanOrEqual(read);
    // The pruned thread still resumes.
    const again = await graph.invoke({ items: ['more'] }, cfg('k'));
    expect(again.count).toBe(12);
  });

  it('a thread expires ttl after its last write, on the store clock', async () => {
    const clock = new ManualClock();
    const store = tempStore(clock);
    const saver = new BatonSaver({ store, ttl: '1h' });
    const graph = chain(2).compile({ checkpointer: saver });
    await graph.invoke({ items: [] }, cfg('old'));
    await clock.advance(40 * 60_000);
    await graph.invoke({ items: [] }, cfg('young'));
    const old = await saver.getThread('old');
    expect(old?.expiresAt).toBe(clock.now() - 40 * 60_000 + 3_600_000);
    expect(await saver.sweep()).toBe(0);
    await clock.advance(21 * 60_000);
    expect(await saver.sweep()).toBe(1);
    expect(await saver.getThread('old')).toBeUndefined();
    expect(await saver.getTuple(cfg('old'))).toBeUndefined();
    expect(await saver.getThread('young')).toBeDefined();
    // A write moves the expiry forward.
    await graph.invoke({ items: [] }, cfg('young'));
    expect((await saver.getThread('young'))?.expiresAt).toBe(clock.now() + 3_600_000);
  });

  it('rewrites a thread row only when its expiry moves by a second or comes sooner; lists its newest checkpoint', async () => {
    const clock = new ManualClock();
    const store = tempStore(clock);
    const saver = new BatonSaver({ store, ttl: '1h' });
    const graph = chain(2).compile({ checkpointer: saver });
    await graph.invoke({ items: [] }, cfg('t'));
    const first = await saver.getThread('t');
    await clock.advance(THREAD_REFRESH_MS - 1);
    await graph.invoke({ items: [] }, cfg('t'));
    const newest = await saver.getTuple(cfg('t'));
    // Within the refresh interval the row stays as it was; the newest checkpoint is still listed.
    expect(await saver.getThread('t')).toMatchObject({
      updatedAt: first?.updatedAt,
      expiresAt: first?.expiresAt,
      lastCheckpointId: newest?.checkpoint.id,
      lastStep: newest?.metadata?.step,
      lastSource: newest?.metadata?.source,
    });
    expect(newest?.checkpoint.id).not.toBe(first?.lastCheckpointId);
    await clock.advance(1);
    await graph.invoke({ items: [] }, cfg('t'));
    expect(await saver.getThread('t')).toMatchObject({
      updatedAt: clock.now(),
      expiresAt: clock.now() + 3_600_000,
    });
    // A shorter TTL applies at once.
    const shorter = new BatonSaver({ store, ttl: '10m' });
    await chain(1).compile({ checkpointer: shorter }).invoke({ items: [] }, cfg('t'));
    expect((await saver.getThread('t'))?.expiresAt).toBe(clock.now() + 600_000);
    expect((await saver.listThreads()).map((t) => t.lastCheckpointId)).toEqual([
      (await saver.getTuple(cfg('t')))?.checkpoint.id,
    ]);
  });

  it('sweeps expired threads while it writes, at most once per sweepEvery', async () => {
    const clock = new ManualClock();
    const store = tempStore(clock);
    const saver = new BatonSaver({ store, ttl: '10m', sweepEvery: '5m' });
    const graph = chain(1).compile({ checkpointer: saver });
    await graph.invoke({ items: [] }, cfg('a'));
    await clock.advance(11 * 60_000);
    await graph.invoke({ items: [] }, cfg('b'));
    await new Promise((r) => setImmediate(r));
    expect(await saver.getThread('a')).toBeUndefined();
  });

  it('deleteThread removes everything of one thread only', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    const graph = chain(2).compile({ checkpointer: saver });
    await graph.invoke({ items: [] }, cfg('x'));
    await graph.invoke({ items: [] }, cfg('y'));
    await saver.deleteThread('x');
    for (const table of ['langgraph_entries', 'langgraph_threads'])
      expect(
        store.database.prepare(`SELECT count(*) FROM ${table} WHERE thread_id = 'x'`).pluck().get(),
      ).toBe(0);
    expect((await graph.getState(cfg('y'))).values.count).toBe(2);
  });

  it('copyThread forks a thread that then diverges from the original', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    const graph = chain(2).compile({ checkpointer: saver });
    await graph.invoke({ items: ['a'] }, cfg('src'));
    await saver.copyThread('src', 'fork');
    expect((await graph.getState(cfg('fork'))).values).toEqual((await graph.getState(cfg('src'))).values);
    await graph.invoke({ items: ['b'] }, cfg('fork'));
    expect((await graph.getState(cfg('fork'))).values.count).toBe(4);
    expect((await graph.getState(cfg('src'))).values.count).toBe(2);
    await expect(saver.copyThread('src', 'fork')).rejects.toMatchObject({ code: 'THREAD_EXISTS' });
    await expect(saver.copyThread('nope', 'other')).rejects.toMatchObject({ code: 'THREAD_NOT_FOUND' });
  });

  it('prune keep_latest leaves one checkpoint per namespace that still resumes; delete removes', async () => {
    const store = tempStore();
    const saver = new BatonSaver({ store });
    const graph = chain(3).compile({ checkpointer: saver });
    await graph.invoke({ items: [] }, cfg('p'));
    await graph.invoke({ items: [] }, cfg('q'));
    await saver.prune(['p']);
    const left = [];
    for await (const t of saver.list(cfg('p'))) left.push(t);
    expect(left).toHaveLength(1);
    expect((await graph.getState(cfg('p'))).values.count).toBe(3);
    expect((await graph.invoke({ items: [] }, cfg('p'))).count).toBe(6);
    await saver.prune(['q'], 'delete');
    expect(await saver.getThread('q')).toBeUndefined();
    await expect(saver.prune(['p'], 'all' as never)).rejects.toMatchObject({ field: 'strategy' });
  });
});

describe('atomic writes and bad input', () => {
  it('putWrites stores all writes of a task or none', async () => {
    const store = tempStore();
    // A serializer that hands the database a row it must refuse (no type) for one value, so the
    // second insert of a task fails inside the transaction after the first succeeded.
    const json = new JsonPlusSerializer();
    const serde = {
      dumpsTyped: async (v: unknown): Promise<[string, Uint8Array]> =>
        v === 'poison' ? [null as unknown as string, new Uint8Array(1)] : json.dumpsTyped(v),
      loadsTyped: (t: string, d: Uint8Array | string) => json.loadsTyped(t, d),
    };
    const saver = new BatonSaver({ store, serde });
    const config = await saver.put(
      { configurable: { thread_id: 'w', checkpoint_ns: '' } },
      {
        v: 4,
        id: uuid6(-1),
        ts: new Date(0).toISOString(),
        channel_values: {},
        channel_versions: {},
        versions_seen: {},
      },
      { source: 'input', step: -1, parents: {} },
      {},
    );
    await expect(
      saver.putWrites(
        config,
        [
          ['a', 1],
          ['b', 'poison'],
        ],
        'task-1',
      ),
    ).rejects.toThrow(/NOT NULL/);
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([]);
    await saver.putWrites(
      config,
      [
        ['a', 1],
        ['b', 2],
      ],
      'task-1',
    );
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ['task-1', 'a', 1],
      ['task-1', 'b', 2],
    ]);
  });

  it('refuses bad options and configs with the field named', async () => {
    const store = tempStore();
    expect(() => new BatonSaver({ store, keepLatest: 0 })).toThrow(/keepLatest must be a whole number/);
    expect(() => new BatonSaver({ store, ttl: 'soon' })).toThrow(/ttl/);
    expect(() => new BatonSaver({ store: 42 as never })).toThrow(/store must be/);
    const saver = new BatonSaver({ store });
    const cp = { v: 4, id: uuid6(-1), ts: '', channel_values: {}, channel_versions: {}, versions_seen: {} };
    await expect(saver.put({}, cp, { source: 'input', step: -1, parents: {} }, {})).rejects.toThrow(
      /config.configurable/,
    );
    await expect(saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task')).rejects.toThrow(
      /checkpoint_id/,
    );
    const err = await saver.putWrites({ configurable: { checkpoint_id: 'c' } }, [], 'task').catch((e) => e);
    expect(err).toBeInstanceOf(BatonError);
    expect(err.message).toMatch(/thread_id/);
  });

  it('opens a file like LangGraph’s SqliteSaver (WAL, synchronous=NORMAL) unless told FULL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-lg-sync-'));
    dirs.push(dir);
    const normal = new BatonSaver({ store: join(dir, 'normal.db') });
    const full = new BatonSaver({ store: join(dir, 'full.db'), synchronous: 'FULL' });
    try {
      // FULL: each commit's WAL is fdatasynced before it is acknowledged (off the event loop).
      const mode = (s: BatonSaver) => (s as unknown as { ownedStore: SqliteStore }).ownedStore.synchronous;
      expect(mode(normal)).toBe('NORMAL');
      expect(mode(full)).toBe('FULL');
    } finally {
      await normal.close();
      await full.close();
    }
    expect(() => new BatonSaver({ store: tempStore(), synchronous: 'FULL' })).toThrow(/synchronous/);
    expect(() => new BatonSaver({ store: join(dir, 'x.db'), synchronous: 'OFF' as never })).toThrow(
      /synchronous must be "NORMAL" or "FULL"/,
    );
  });
});
