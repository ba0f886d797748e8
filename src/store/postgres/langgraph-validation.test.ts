/**
 * LangGraph's official checkpointer validation suite against BatonSaver on the Postgres store (a
 * fresh schema per checkpointer), plus retention on Postgres. Fails, not skips, under CI=true when
 * the server cannot be reached.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BatonSaver } from '../../langgraph/index.ts';
import { ManualClock } from '../../time/index.ts';
import { describePostgres, testSchemas } from './fixtures/pg-test-server.ts';
import type { PostgresStore } from './index.ts';

// The suite is written for Jest-style globals; this project does not turn vitest's globals on.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { validate } = await import('@langchain/langgraph-checkpoint-validation');

const schemas = testSchemas();
const stores = new Map<BatonSaver, PostgresStore>();

describePostgres('baton/langgraph on Postgres', () => {
  validate({
    checkpointerName: 'baton/langgraph (Postgres)',
    createCheckpointer: async () => {
      const store = await schemas.open(new ManualClock(), schemas.fresh());
      const saver = new BatonSaver({ store });
      stores.set(saver, store);
      return saver;
    },
    destroyCheckpointer: async (saver: BatonSaver) => {
      await stores.get(saver)?.close();
      stores.delete(saver);
    },
  });

  it('applies keepLatest, copy, prune, TTL sweep and delete on Postgres', async () => {
    const clock = new ManualClock();
    const store = await schemas.open(clock, schemas.fresh());
    try {
      const saver = new BatonSaver({ store, keepLatest: 2, ttl: '1h' });
      let parent: string | undefined;
      for (let step = -1; step < 4; step++) {
        const id = `1f0000000000000${step + 2}`;
        const config = await saver.put(
          {
            configurable: { thread_id: 't', checkpoint_ns: '', ...(parent ? { checkpoint_id: parent } : {}) },
          },
          {
            v: 4,
            id,
            ts: '',
            channel_values: { n: step },
            channel_versions: { n: step + 2 },
            versions_seen: {},
          },
          { source: step < 0 ? 'input' : 'loop', step, parents: {} },
          { n: step + 2 },
        );
        await saver.putWrites(config, [['n', step + 1]], `task-${step}`);
        parent = id;
      }
      const kept = [];
      for await (const t of saver.list({ configurable: { thread_id: 't' } })) kept.push(t.metadata?.step);
      expect(kept).toEqual([3, 2]);
      expect((await saver.getTuple({ configurable: { thread_id: 't' } }))?.checkpoint.channel_values).toEqual(
        { n: 3 },
      );
      await saver.copyThread('t', 'fork');
      expect((await saver.getThread('fork'))?.checkpoints).toBe(2);
      await expect(saver.copyThread('t', 'fork')).rejects.toMatchObject({ code: 'THREAD_EXISTS' });
      // keep_latest over a thread: one checkpoint left, still readable (its blobs kept).
      await saver.prune(['fork']);
      expect((await saver.getThread('fork'))?.checkpoints).toBe(1);
      expect(
        (await saver.getTuple({ configurable: { thread_id: 'fork' } }))?.checkpoint.channel_values,
      ).toEqual({ n: 3 });
      await clock.advance(3_600_001);
      expect(await saver.sweep()).toBe(2);
      expect(await saver.listThreads()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
