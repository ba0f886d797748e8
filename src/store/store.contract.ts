/**
 * The Store contract: every implementation (SQLite now, Postgres later) runs this same suite.
 * `runStoreContract('sqlite', { newStore })` from the implementation's test file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError, newEvent } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import type { NewRun } from './records.ts';
import type { Store } from './store.ts';

export interface ContractHarness {
  /** A fresh, empty store whose times come from `clock`. */
  newStore(clock: ManualClock): Promise<Store>;
}

export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

export function task(id: string, extra: Partial<NewRun> = {}): NewRun {
  return { id, kind: 'task', name: 'work', input: { id }, status: 'queued', ...extra };
}

export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isBatonError(err) ? err.code : err).toBe(code);
}

export function runStoreContract(name: string, harness: ContractHarness): void {
  describe(`Store contract: ${name} — runs and leases`, () => {
    let store: Store;
    let clock: ManualClock;
    const open = async () => {
      clock = new ManualClock(T0);
      store = await harness.newStore(clock);
      return store;
    };
    afterEach(async () => {
      await store?.close();
    });

    it('keeps signals until a fenced read takes the oldest of a name once, with its step, and refuses ended runs', async () => {
      await open();
      await store.createRuns([task('s1')], []);
      await store.addSignal({ id: 'sig-a', runId: 's1', name: 'go', payload: { n: 1 } }, [
        newEvent('s1', 'signal:received', { name: 'go', signalId: 'sig-a' }),
      ]);
      await store.addSignal({ id: 'sig-b', runId: 's1', name: 'go', payload: { n: 2 } }, []);
      const [run] = await store.claimRuns({ owner: 'w1', leaseMs: 1_000, limit: 1, names: ['work'] });
      const fence = { runId: 's1', token: run?.leaseToken ?? 0 };
      const step = { key: 'baton:signal:1', attempt: 1, version: 1 };
      const first = await store.readSignal(fence, 'go', step, []);
      expect(first).toMatchObject({ id: 'sig-a', payload: { n: 1 }, readKey: 'baton:signal:1', readAt: T0 });
      expect(await store.readSignal(fence, 'other', { ...step, key: 'k2' }, [])).toBeUndefined();
      expect((await store.getSteps('s1')).map((s) => [s.key, s.output])).toEqual([
        ['baton:signal:1', { signal: { id: 'sig-a', payload: { n: 1 }, sentAt: T0 } }],
      ]);
      expect((await store.listSignals('s1', { name: 'go', unread: true })).map((x) => x.id)).toEqual([
        'sig-b',
      ]);
      await expectCode(
        store.readSignal({ runId: 's1', token: 999 }, 'go', { ...step, key: 'k3' }, []),
        'LEASE_LOST',
      );
      await store.transition('s1', { status: 'succeeded', output: 1 }, [], { fence });
      await expectCode(
        store.addSignal({ id: 'sig-c', runId: 's1', name: 'go', payload: null }, []),
        'RUN_CONFLICT',
      );
      await expectCode(
        store.addSignal({ id: 'sig-d', runId: 'nope', name: 'go', payload: null }, []),
        'RUN_NOT_FOUND',
      );
      expect((await store.listSignals('s1')).map((x) => x.id)).toEqual(['sig-a', 'sig-b']);
    });

    it('round-trips a run with its JSON fields', async () => {
      await open();
      await store.createRuns(
        [task('r1', { input: { q: 'α', n: [1, 2] }, options: { ttlMs: 5 }, budgetMs: 60_000 })],
        [newEvent('r1', 'run:created', { name: 'work', kind: 'task' })],
      );
      const run = await store.getRun('r1');
      expect(run).toMatchObject({
        id: 'r1',
        rootId: 'r1',
        parentId: null,
        status: 'queued',
        input: { q: 'α', n: [1, 2] },
        options: { ttlMs: 5 },
        budgetMs: 60_000,
        attempt: 0,
        leaseToken: 0,
        createdAt: T0,
      });
      expect(await store.getRun('nope')).toBeUndefined();
    });

    it('writes nothing from a batch that contains a duplicate id', async () => {
      await open();
      await store.createRuns([task('a')], []);
      await expectCode(store.createRuns([task('b'), task('a')], []), 'RUN_CONFLICT');
      expect(await store.getRun('b')).toBeUndefined();
    });

    it('claims in priority then creation order, only the named tasks, and fences each claim', async () => {
      await open();
      await store.createRuns(
        [task('r1'), task('r2', { priority: 5 }), task('r3'), task('other', { name: 'unknown-task' })],
        [],
      );
      const first = await store.claimRuns({ owner: 'w1', leaseMs: 1_000, limit: 2, names: ['work'] });
      expect(first.map((r) => r.id)).toEqual(['r2', 'r1']);
      expect(first[0]).toMatchObject({
        status: 'running',
        leaseOwner: 'w1',
        leaseToken: 1,
        attempt: 1,
        startedAt: T0,
      });
      expect(first[0]?.leaseExpiresAt).toBe(T0 + 1_000);
      const second = await store.claimRuns({ owner: 'w2', leaseMs: 1_000, limit: 10, names: ['work'] });
      expect(second.map((r) => r.id)).toEqual(['r3']);
    });

    it('gives each run to exactly one of many concurrent claimers', async () => {
      await open();
      await store.createRuns(
        Array.from({ length: 40 }, (_, i) => task(`r${String(i).padStart(2, '0')}`)),
        [],
      );
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.claimRuns({ owner: `w${i}`, leaseMs: 1_000, limit: 7, names: ['work'] }),
        ),
      );
      const ids = claims.flat().map((r) => r.id);
      expect(ids.length).toBe(40);
      expect(new Set(ids).size).toBe(40);
    });

    it('holds per-task limits across claimers', async () => {
      await open();
      await store.createRuns([task('a1'), task('a2'), task('a3'), task('b1', { name: 'other' })], []);
      const one = await store.claimRuns({
        owner: 'w1',
        leaseMs: 1_000,
        limit: 10,
        names: ['work', 'other'],
        nameLimits: { work: 2 },
      });
      expect(one.map((r) => r.id).sort()).toEqual(['a1', 'a2', 'b1']);
      const two = await store.claimRuns({
        owner: 'w2',
        leaseMs: 1_000,
        limit: 10,
        names: ['work'],
        nameLimits: { work: 2 },
      });
      expect(two).toEqual([]);
    });

    it('claims only the runs named, in the commit that created them', async () => {
      await open();
      const created = store.createRuns(
        [task('x1'), task('x2'), task('x3'), task('later', { wakeAt: T0 + 5_000 })],
        [],
      );
      const claiming = store.claimRuns({
        owner: 'w',
        leaseMs: 1_000,
        limit: 10,
        names: ['work'],
        ids: ['x3', 'x1', 'later', 'missing'],
      });
      await created;
      expect((await claiming).map((r) => r.id).sort()).toEqual(['x1', 'x3']);
      expect((await store.getRun('x2'))?.status).toBe('queued');
      expect(
        await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 10, names: ['work'], ids: [] }),
      ).toEqual([]);
    });

    it('does not claim a run before its wake time', async () => {
      await open();
      await store.createRuns([task('later', { wakeAt: T0 + 5_000 })], []);
      expect(await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] })).toEqual([]);
      expect(await store.nextWakeAt()).toBe(T0 + 5_000);
      await clock.advance(5_000);
      expect((await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] })).length).toBe(
        1,
      );
    });

    it('rejects writes from a stale lease after the run was recovered and claimed again', async () => {
      await open();
      await store.createRuns([task('r1')], []);
      const [a] = await store.claimRuns({ owner: 'old', leaseMs: 1_000, limit: 1, names: ['work'] });
      if (!a) throw new Error('not claimed');
      const oldFence = { runId: 'r1', token: a.leaseToken };
      await store.recordStep(oldFence, { key: 's1', attempt: 1, output: 1, version: 1 }, []);
      await clock.advance(1_001);
      const recovered = await store.recoverExpiredLeases();
      expect(recovered).toEqual([{ runId: 'r1', previousOwner: 'old' }]);
      const [b] = await store.claimRuns({ owner: 'new', leaseMs: 1_000, limit: 1, names: ['work'] });
      expect(b?.leaseToken).toBe(a.leaseToken + 1);
      expect(b?.attempt).toBe(2);
      await expectCode(
        store.recordStep(oldFence, { key: 's2', attempt: 1, output: 2, version: 1 }, []),
        'LEASE_LOST',
      );
      await expectCode(
        store.saveCheckpoint(oldFence, { attempt: 1, state: {}, record: {}, version: 1 }, []),
        'LEASE_LOST',
      );
      await expectCode(store.addPartial(oldFence, 1, ['x'], []), 'LEASE_LOST');
      await expectCode(
        store.transition('r1', { status: 'succeeded' }, [], { fence: oldFence }),
        'LEASE_LOST',
      );
      expect((await store.getSteps('r1')).map((s) => s.key)).toEqual(['s1']);
      const events = await store.readEvents({ runId: 'r1' });
      expect(events.map((e) => e.type)).toEqual(['lease:recovered', 'run:queued']);
    });

    it('extends leases on heartbeat and reports the runs an owner no longer holds', async () => {
      await open();
      await store.createRuns([task('r1'), task('r2')], []);
      await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 2, names: ['work'] });
      await clock.advance(900);
      expect((await store.heartbeat('w', 1_000, ['r1', 'r2'])).sort()).toEqual(['r1', 'r2']);
      await store.transition('r2', { status: 'cancelled', finishedAt: clock.now() }, []);
      await clock.advance(900);
      expect(await store.recoverExpiredLeases()).toEqual([]);
      expect(await store.heartbeat('w', 1_000, ['r1', 'r2'])).toEqual(['r1']);
      expect((await store.getRun('r2'))?.leaseOwner).toBeNull();
    });

    it('lets a held run its owner no longer executes expire, while keeping the others alive', async () => {
      await open();
      await store.createRuns([task('live'), task('orphan')], []);
      await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 2, names: ['work'] });
      await clock.advance(800);
      expect((await store.heartbeat('w', 1_000, ['live'])).sort()).toEqual(['live', 'orphan']);
      await clock.advance(300);
      expect(await store.recoverExpiredLeases()).toEqual([{ runId: 'orphan', previousOwner: 'w' }]);
      expect((await store.getRun('live'))?.status).toBe('running');
    });

    it('requeues every run of a released owner at once', async () => {
      await open();
      await store.createRuns([task('r1'), task('r2')], []);
      await store.claimRuns({ owner: 'gone', leaseMs: 60_000, limit: 2, names: ['work'] });
      const back = await store.releaseOwners(['gone'], 'owner_gone');
      expect(back.map((r) => r.runId).sort()).toEqual(['r1', 'r2']);
      expect((await store.getRun('r1'))?.status).toBe('queued');
    });

    it('guards transitions by state machine, expected status and fence', async () => {
      await open();
      await store.createRuns([task('r1')], []);
      await expectCode(store.transition('r1', { status: 'succeeded' }, []), 'RUN_CONFLICT');
      await expectCode(
        store.transition('r1', { status: 'cancelled' }, [], { expectStatus: ['running'] }),
        'RUN_CONFLICT',
      );
      await expectCode(store.transition('missing', { status: 'cancelled' }, []), 'RUN_NOT_FOUND');
      const [r] = await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] });
      const done = await store.transition(
        'r1',
        { status: 'succeeded', output: { ok: true }, finishedAt: clock.now(), expiresAt: clock.now() + 10 },
        [newEvent('r1', 'run:succeeded', { durationMs: 0 })],
        { fence: { runId: 'r1', token: r?.leaseToken ?? -1 } },
      );
      expect(done).toMatchObject({ status: 'succeeded', output: { ok: true }, leaseOwner: null });
      await expectCode(store.transition('r1', { status: 'queued' }, []), 'RUN_CONFLICT');
    });

    it('keeps memoized steps, checkpoints and partials in order', async () => {
      await open();
      await store.createRuns([task('r1')], []);
      const [r] = await store.claimRuns({ owner: 'w', leaseMs: 1_000, limit: 1, names: ['work'] });
      const fence = { runId: 'r1', token: r?.leaseToken ?? 0 };
      await store.recordStep(fence, { key: 'fetch', attempt: 1, output: { rows: 3 }, version: 2 }, []);
      await expectCode(
        store.recordStep(fence, { key: 'fetch', attempt: 1, output: 9, version: 2 }, []),
        'RUN_CONFLICT',
      );
      expect(await store.getSteps('r1')).toMatchObject([{ key: 'fetch', output: { rows: 3 }, version: 2 }]);
      const s1 = await store.saveCheckpoint(
        fence,
        { attempt: 1, state: { i: 1 }, record: { items_analyzed: 1 }, version: 1 },
        [newEvent('r1', 'checkpoint:saved', { seq: 0, itemsAnalyzed: 1, progressPercentage: null })],
      );
      const s2 = await store.saveCheckpoint(
        fence,
        { attempt: 1, state: { i: 2 }, record: {}, version: 1 },
        [],
      );
      expect([s1, s2]).toEqual([1, 2]);
      expect((await store.getLastCheckpoint('r1'))?.state).toEqual({ i: 2 });
      expect((await store.listCheckpoints('r1')).map((c) => c.seq)).toEqual([1, 2]);
      const saved = (await store.readEvents({ runId: 'r1' })).find((e) => e.type === 'checkpoint:saved');
      expect(saved?.data).toMatchObject({ seq: 1 });
      await store.addPartial(fence, 1, ['a', 'b'], []);
      await store.addPartial(fence, 1, ['c'], []);
      expect((await store.listPartials('r1')).flatMap((p) => p.findings)).toEqual(['a', 'b', 'c']);
    });

    it('publishes events after commit only, and not those of a write that failed', async () => {
      await open();
      const seen: string[] = [];
      store.onEvents((events) => seen.push(...events.map((e) => `${e.runId}:${e.type}`)));
      await store.createRuns([task('r1')], [newEvent('r1', 'run:created', { name: 'work', kind: 'task' })]);
      await expectCode(
        store.createRuns([task('r1')], [newEvent('r1', 'run:created', { name: 'work', kind: 'task' })]),
        'RUN_CONFLICT',
      );
      expect(seen).toEqual(['r1:run:created']);
      const all = await store.readEvents({ runId: 'r1' });
      expect(all.length).toBe(1);
      expect(await store.readEvents({ runId: 'r1', afterId: all[0]?.id ?? 0 })).toEqual([]);
    });

    it('hands each due timer to exactly one taker and reports the next wake time', async () => {
      await open();
      await store.addTimer({
        id: 't1',
        runId: null,
        kind: 'k',
        dueAt: T0 + 100,
        payload: { a: 1 },
        createdAt: T0,
      });
      await store.addTimer({ id: 't2', runId: null, kind: 'k', dueAt: T0 + 200, payload: {}, createdAt: T0 });
      expect(await store.nextWakeAt()).toBe(T0 + 100);
      expect(await store.takeDueTimers(10)).toEqual([]);
      await clock.advance(250);
      const [x, y] = await Promise.all([store.takeDueTimers(10), store.takeDueTimers(10)]);
      expect([...(x ?? []), ...(y ?? [])].map((t) => t.id).sort()).toEqual(['t1', 't2']);
      expect(await store.nextWakeAt()).toBeUndefined();
      await store.addTimer({ id: 't3', runId: null, kind: 'k', dueAt: T0 + 999, payload: {}, createdAt: T0 });
      await store.cancelTimers(['t3']);
      expect(await store.nextWakeAt()).toBeUndefined();
    });

    it('lists runs by wait reason, creation time and schedule; reports the newest event id', async () => {
      await open();
      expect(await store.lastEventId()).toBe(0);
      await store.createRuns(
        [
          task('a', { status: 'waiting', waitReason: 'decision' }),
          task('b', { status: 'waiting', waitReason: 'timer', options: { schedule: { at: T0 } } }),
        ],
        [newEvent('a', 'run:created', { name: 'work', kind: 'task' })],
      );
      await clock.advance(60_000);
      await store.createRuns(
        [task('c', { parentId: 'a', rootId: 'a', options: { schedule: { at: T0 + 1 } } })],
        [newEvent('c', 'run:created', { name: 'work', kind: 'task' })],
      );
      const ids = async (q: Parameters<Store['listRuns']>[0]) => (await store.listRuns(q)).map((r) => r.id);
      expect(await ids({ waitReason: 'decision' })).toEqual(['a']);
      expect(await ids({ waitReason: 'timer' })).toEqual(['b']);
      expect(await ids({ createdAfter: T0 + 1, topLevel: false })).toEqual(['c']);
      expect(await ids({ createdBefore: T0 + 1, topLevel: false })).toEqual(['b', 'a']);
      expect(await ids({ scheduled: true, topLevel: false })).toEqual(['c', 'b']);
      const events = await store.readEvents({});
      expect(await store.lastEventId()).toBe(events.at(-1)?.id);
    });

    it('lists and removes workers', async () => {
      await open();
      await store.registerWorker({
        id: 'w1',
        host: 'h',
        pid: 1,
        processStart: '9',
        startedAt: T0,
        heartbeatAt: T0,
      });
      await store.registerWorker({
        id: 'w2',
        host: 'k',
        pid: 2,
        processStart: null,
        startedAt: T0,
        heartbeatAt: T0,
      });
      expect((await store.listWorkers('h')).map((w) => w.id)).toEqual(['w1']);
      await store.removeWorkers(['w1']);
      expect((await store.listWorkers()).map((w) => w.id)).toEqual(['w2']);
    });
  });
}
