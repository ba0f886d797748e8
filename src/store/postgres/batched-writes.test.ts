/**
 * A batch's first try keeps statements for its next round trip, merges rows of the same shape and
 * locks the runs of all its transitions at once (batch-conn.ts, merged-writes.ts). These tests
 * issue writes together, so that they share one batch, and check that the round trips do not grow
 * with the batch, that a failing write still fails alone with its own error, and that a row locked
 * early is read again when an earlier write of the batch changed it.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import type { RunRecord } from '../records.ts';
import { expectCode, T0, task } from '../store.contract.ts';
import {
  countingClient,
  describePostgres,
  PG_URL,
  testSchemas,
  withClient,
} from './fixtures/pg-test-server.ts';
import { openPostgresStore, type PostgresStore } from './index.ts';

const schemas = testSchemas();

/** Counts the messages the store's clients send (one per round trip). */
const { Client: CountingClient, messages } = countingClient();

describePostgres('Postgres write batches', () => {
  let store: PostgresStore;
  let pool: pg.Pool;
  afterEach(async () => {
    await store.close();
    await pool.end();
  });

  const open = async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 4, Client: CountingClient });
    store = await openPostgresStore({ pool, schema: schemas.fresh(), clock: new ManualClock(T0) });
  };

  /** Creates and claims these runs; returns them as claimed. */
  const running = async (ids: string[]): Promise<RunRecord[]> => {
    await store.createRuns(
      ids.map((id) => task(id)),
      [],
    );
    return store.claimRuns({ owner: 'w', leaseMs: 60_000, limit: ids.length, names: ['work'] });
  };

  it('ends forty runs in one commit whose round trips do not grow with the batch', async () => {
    await open();
    const runs = await running(Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`));
    const commits = store.commitStats.commits;
    messages.sent = 0;
    const ends = runs.flatMap((run) => {
      const fence = { runId: run.id, token: run.leaseToken };
      return [
        store.appendEvents(
          [newEvent(run.id, 'attempt:started', { attempt: 1, owner: 'w', timeoutMs: null })],
          fence,
        ),
        store.transition(
          run.id,
          { status: 'succeeded', output: { ok: run.id }, finishedAt: T0 },
          [newEvent(run.id, 'run:succeeded', { durationMs: 0 })],
          { fence },
        ),
      ];
    });
    await Promise.all(ends);
    expect(store.commitStats.commits - commits).toBe(1);
    // BEGIN with the first fence check and the lock of all forty; the updates, fence checks and
    // events; COMMIT. Sent one statement at a time it was 3 per run and 4 per batch (124).
    expect(messages.sent).toBeLessThanOrEqual(4);
    const after = await store.listRuns({ status: 'succeeded' });
    expect(after.map((r) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
    expect((await store.getRun('r07'))?.output).toEqual({ ok: 'r07' });
    const events = await store.readEvents({ runId: 'r07' });
    expect(events.map((e) => e.type)).toEqual(['attempt:started', 'run:succeeded']);
  });

  it('fails only the write whose fence or id is wrong, with its own error, and commits the rest', async () => {
    await open();
    const [a, b] = await running(['a', 'b']);
    if (!a || !b) throw new Error('claimed nothing');
    const results = await Promise.allSettled([
      store.appendEvents([newEvent('a', 'log:message', { level: 'info', message: 'x' })], {
        runId: 'a',
        token: a.leaseToken + 1,
      }),
      store.transition('b', { status: 'succeeded', output: 1, finishedAt: T0 }, [], {
        fence: { runId: 'b', token: b.leaseToken },
      }),
      store.createRuns([task('a')], []),
      store.createRuns([task('c')], [newEvent('c', 'run:created', { name: 'work', kind: 'task' })]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    await expectCode(Promise.reject((results[0] as PromiseRejectedResult).reason), 'LEASE_LOST');
    await expectCode(Promise.reject((results[2] as PromiseRejectedResult).reason), 'RUN_CONFLICT');
    expect((await store.getRun('b'))?.status).toBe('succeeded');
    expect((await store.getRun('c'))?.status).toBe('queued');
    expect(await store.readEvents({ runId: 'a' })).toEqual([]);
  });

  it('reads a run locked early again when an earlier write of the batch gave it a child', async () => {
    await open();
    const [a, b] = await running(['a', 'b']);
    if (!a || !b) throw new Error('claimed nothing');
    const commits = store.commitStats.commits;
    // One batch: a's end locks b too (b's end comes later); then b gets a child; then b ends.
    await Promise.all([
      store.transition('a', { status: 'succeeded', output: 1, finishedAt: T0 }, [], {
        fence: { runId: 'a', token: a.leaseToken },
      }),
      store.createRuns([task('b.child', { parentId: 'b', rootId: 'b' })], []),
      store.transition('b', { status: 'cancelled', finishedAt: T0 }, [], {
        fence: { runId: 'b', token: b.leaseToken },
      }),
    ]);
    expect(store.commitStats.commits - commits).toBe(1);
    // Ending b takes its open children with it: the lock must have seen the child.
    expect((await store.getRun('b.child'))?.status).toBe('cancelled');
  });

  it('reads a run locked early again when a claim of the same batch may have taken it', async () => {
    await open();
    const [a] = await running(['a']);
    if (!a) throw new Error('claimed nothing');
    await store.createRuns([task('q')], []);
    const commits = store.commitStats.commits;
    const [, claimed, cancel] = await Promise.allSettled([
      store.transition('a', { status: 'succeeded', output: 1, finishedAt: T0 }, [], {
        fence: { runId: 'a', token: a.leaseToken },
      }),
      // Offered runs (ids) are claimed in the write queue, in the order the writes were issued.
      store.claimRuns({ owner: 'w2', leaseMs: 60_000, limit: 1, names: ['work'], ids: ['q'] }),
      // Cancels q only if it is still queued: the claim before it in the batch has taken it.
      store.transition('q', { status: 'cancelled', finishedAt: T0 }, [], { expectStatus: ['queued'] }),
    ]);
    expect(store.commitStats.commits - commits).toBe(1);
    expect(claimed.status === 'fulfilled' && claimed.value.map((r) => r.id)).toEqual(['q']);
    await expectCode(
      cancel.status === 'rejected' ? Promise.reject(cancel.reason) : Promise.resolve(),
      'RUN_CONFLICT',
    );
    expect((await store.getRun('q'))?.status).toBe('running');
  });

  it('claims any run at once, without waiting for the write batch in flight to commit', async () => {
    await open();
    const [a] = await running(['a']);
    if (!a) throw new Error('claimed nothing');
    await store.createRuns([task('q')], []);
    await withClient(async (other) => {
      // Another session holds a's row: the batch ending a waits for it.
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM ${store.schema}.runs WHERE id = 'a' FOR UPDATE`);
      let ended = false;
      const end = store
        .transition('a', { status: 'succeeded', output: 1, finishedAt: T0 }, [], {
          fence: { runId: 'a', token: a.leaseToken },
        })
        .finally(() => {
          ended = true;
        });
      const claimed = await store.claimRuns({ owner: 'w2', leaseMs: 60_000, limit: 5, names: ['work'] });
      expect(claimed.map((r) => r.id)).toEqual(['q']);
      expect(ended).toBe(false);
      await other.query('COMMIT');
      expect((await end).status).toBe('succeeded');
    });
  });
});
