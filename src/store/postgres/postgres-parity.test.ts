/**
 * One scripted history played against the SQLite store and the Postgres store: everything read back
 * (records, events with their ids, paging, counts, errors) must be the same.
 */
import { expect, it } from 'vitest';
import { isBatonError, newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import type { NewRun } from '../records.ts';
import { openSqliteStore } from '../sqlite/index.ts';
import { T0, task } from '../store.contract.ts';
import type { Store } from '../store.ts';
import { describePostgres, testSchemas } from './fixtures/pg-test-server.ts';

const schemas = testSchemas();

const step = (flow: string, id: string, deps: string[] = []): NewRun => ({
  id: `${flow}.${id}`,
  parentId: flow,
  rootId: flow,
  stepId: id,
  kind: 'task',
  name: 'work',
  input: { step: id },
  status: deps.length ? 'waiting' : 'queued',
  waitReason: deps.length ? 'dependency' : null,
  dependsOn: deps,
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => (isBatonError(e) ? e.code : String(e)),
  );
}

async function history(store: Store, clock: ManualClock): Promise<unknown> {
  const out: Record<string, unknown> = {};
  // Steps listed out of id order: the flow's output keeps the order they were created in.
  await store.createRuns(
    [
      { id: 'f', kind: 'flow', name: 'pipeline', input: {}, status: 'running', options: { ttlMs: 1_000 } },
      step('f', 'zeta'),
      step('f', 'alpha', ['zeta']),
      step('f', 'mid'),
    ],
    [newEvent('f', 'run:created', { name: 'pipeline', kind: 'flow' })],
  );
  await clock.advance(1);
  await store.createRuns(
    [task('t1', { priority: 1 }), task('t2', { name: 'other' }), task('t3', { budgetMs: 500 })],
    [newEvent('t1', 'run:created', { name: 'work', kind: 'task' })],
    { timers: [{ id: 'tm', runId: 't1', kind: 'k', dueAt: T0 + 50, payload: { n: 1 }, createdAt: T0 }] },
  );
  const claimed = await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 10, names: ['work'] });
  out.claimed = claimed;
  const fence = (id: string) => ({ runId: id, token: claimed.find((r) => r.id === id)?.leaseToken ?? -1 });
  await store.recordStep(fence('t1'), { key: 'k', attempt: 1, output: [1, { a: null }], version: 1 }, []);
  await store.saveCheckpoint(
    fence('t1'),
    { attempt: 1, state: { s: 1 }, record: { items_analyzed: 2 }, version: 1 },
    [newEvent('t1', 'checkpoint:saved', { seq: 0, itemsAnalyzed: 2, progressPercentage: null })],
  );
  await store.addPartial(fence('t1'), 1, [{ f: 1 }], []);
  out.stale = await codeOf(
    store.recordStep({ runId: 't1', token: 99 }, { key: 'z', attempt: 1, output: 1, version: 1 }, []),
  );
  await clock.advance(10);
  out.heartbeat = await store.heartbeat('w', 2_000, ['t1', 'f.zeta']);
  await store.transition(
    'f.zeta',
    { status: 'failed', error: { name: 'E', message: 'boom', code: 'TASK_FAILED' } },
    [],
    {
      fence: fence('f.zeta'),
    },
  );
  await store.transition('f.mid', { status: 'succeeded', output: { m: 1 }, finishedAt: clock.now() }, [], {
    fence: fence('f.mid'),
  });
  // Resume: the flow and its failed and blocked steps go back, in one transaction.
  out.reopened = await store.transitionAll([
    {
      runId: 'f',
      patch: { status: 'running', finishedAt: null, expiresAt: null, meta: { resumed: 1 } },
      events: [],
    },
    { runId: 'f.zeta', patch: { status: 'queued', error: null, resetAttempts: true }, events: [] },
    { runId: 'f.alpha', patch: { status: 'waiting', waitReason: 'dependency', error: null }, events: [] },
  ]);
  await clock.advance(5_000);
  out.recovered = await store.recoverExpiredLeases();
  out.claimedAgain = await store.claimRuns({
    owner: 'v',
    leaseMs: 1_000,
    limit: 10,
    names: ['work', 'other'],
    nameLimits: { work: 2 },
  });
  out.timers = await store.takeDueTimers(10);
  out.released = await store.releaseOwners(['v'], 'released');
  // The flow ends: its output lists the steps in the order they were created.
  for (const id of ['f.zeta', 'f.alpha']) {
    const [run] = await store.claimRuns({ owner: 'u', leaseMs: 1_000, limit: 1, names: ['work'], ids: [id] });
    await store.transition(id, { status: 'succeeded', output: id, finishedAt: clock.now() }, [], {
      fence: { runId: id, token: run?.leaseToken ?? -1 },
    });
  }
  out.runs = await Promise.all(
    ['f', 'f.zeta', 'f.alpha', 'f.mid', 't1', 't2', 't3'].map((id) => store.getRun(id)),
  );
  out.top = await store.listRuns();
  out.page = await store.listRuns({ beforeId: 't2', limit: 1 });
  out.steps = await store.listRuns({ parentId: 'f' });
  out.named = await store.listRuns({ name: 'work', topLevel: false, status: 'queued' });
  out.counts = await store.countRuns();
  out.events = await store.readEvents({});
  out.flowEvents = await store.readEvents({ rootId: 'f', afterId: 2, limit: 5 });
  out.memo = [await store.getSteps('t1'), await store.listCheckpoints('t1'), await store.listPartials('t1')];
  out.wake = await store.nextWakeAt();
  return out;
}

describePostgres('Postgres store parity with SQLite', () => {
  it('reads back the same history as the SQLite store', async () => {
    const pgClock = new ManualClock(T0);
    const sqliteClock = new ManualClock(T0);
    const pgStore = await schemas.open(pgClock, schemas.fresh());
    const sqlite = openSqliteStore(':memory:', { clock: sqliteClock });
    try {
      const fromPg = await history(pgStore, pgClock);
      const fromSqlite = await history(sqlite, sqliteClock);
      expect(fromPg).toStrictEqual(fromSqlite);
      // Key order too (toStrictEqual ignores it): JSON text is what reaches clients.
      expect(JSON.stringify(fromPg)).toBe(JSON.stringify(fromSqlite));
      expect((fromPg as { stale: string }).stale).toBe('LEASE_LOST');
    } finally {
      await Promise.all([pgStore.close(), sqlite.close()]);
    }
  });
});
