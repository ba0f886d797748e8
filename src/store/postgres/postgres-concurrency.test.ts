/**
 * Several processes sharing one database, played by several stores (each with its own pool, as
 * separate processes would have) on one schema.
 */
import { afterEach, expect, it } from 'vitest';
import { newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import type { NewRun, RunRecord } from '../records.ts';
import { expectCode, T0, task } from '../store.contract.ts';
import { describePostgres, testSchemas, withClient } from './fixtures/pg-test-server.ts';
import type { PostgresStore } from './index.ts';

const schemas = testSchemas();

describePostgres('Postgres store shared by several processes', () => {
  let stores: PostgresStore[] = [];
  let clock: ManualClock;
  let schema: string;
  const processes = async (n: number): Promise<PostgresStore[]> => {
    clock = new ManualClock(T0);
    schema = schemas.fresh();
    // The first one creates the schema; the others find it migrated.
    stores = [await schemas.open(clock, schema)];
    for (let i = 1; i < n; i++) stores.push(await schemas.open(clock, schema));
    return stores;
  };
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });

  /** Claims until nothing is left, from every store at once, each with several claims in flight. */
  const claimAll = (request: { names: string[]; nameLimits?: Record<string, number> }, limit = 7) =>
    Promise.all(
      stores.map(async (store, i) => {
        const got: RunRecord[] = [];
        for (;;) {
          const batches = await Promise.all(
            [0, 1, 2].map((k) =>
              store.claimRuns({ owner: `p${i}.${k}`, leaseMs: 60_000, limit, ...request }),
            ),
          );
          const claimed = batches.flat();
          if (claimed.length === 0) return got;
          got.push(...claimed);
        }
      }),
    );

  it('never gives one run to two processes claiming the same 200 runs at once', async () => {
    const [a] = await processes(2);
    await a?.createRuns(
      Array.from({ length: 200 }, (_, i) => task(`r${String(i).padStart(3, '0')}`)),
      [],
    );
    const [fromA, fromB] = await claimAll({ names: ['work'] });
    const ids = [...(fromA ?? []), ...(fromB ?? [])].map((r) => r.id);
    expect(ids.length).toBe(200);
    expect(new Set(ids).size).toBe(200);
    expect(fromA?.length).toBeGreaterThan(0);
    expect(fromB?.length).toBeGreaterThan(0);
    const runs = await a?.listRuns({ status: 'running', limit: 1_000 });
    expect(runs?.every((r) => r.leaseToken === 1 && r.attempt === 1)).toBe(true);
  });

  it('holds a per-task limit across processes', async () => {
    const [a, b] = await processes(3);
    await a?.createRuns(
      Array.from({ length: 200 }, (_, i) => task(`w${i}`)).concat([task('o1', { name: 'other' })]),
      [],
    );
    const claimed = (await claimAll({ names: ['work', 'other'], nameLimits: { work: 3 } }, 5)).flat();
    expect(claimed.filter((r) => r.name === 'work').length).toBe(3);
    expect(claimed.filter((r) => r.name === 'other').length).toBe(1);
    expect((await b?.countRuns())?.running).toBe(4);
  });

  it('refuses a stale lease’s writes with LEASE_LOST after another process took the run', async () => {
    const [a, b] = await processes(2);
    await a?.createRuns([task('r1')], []);
    const [first] = (await a?.claimRuns({ owner: 'old', leaseMs: 1_000, limit: 1, names: ['work'] })) ?? [];
    const stale = { runId: 'r1', token: first?.leaseToken ?? -1 };
    await clock.advance(1_001);
    expect(await b?.recoverExpiredLeases()).toEqual([{ runId: 'r1', previousOwner: 'old' }]);
    const [second] = (await b?.claimRuns({ owner: 'new', leaseMs: 1_000, limit: 1, names: ['work'] })) ?? [];
    expect(second?.leaseToken).toBe(stale.token + 1);
    if (!a) throw new Error('no store');
    await expectCode(a.recordStep(stale, { key: 's', attempt: 1, output: 1, version: 1 }, []), 'LEASE_LOST');
    await expectCode(
      a.saveCheckpoint(stale, { attempt: 1, state: {}, record: {}, version: 1 }, []),
      'LEASE_LOST',
    );
    await expectCode(a.addPartial(stale, 1, ['x'], []), 'LEASE_LOST');
    await expectCode(
      a.appendEvents([newEvent('r1', 'run:queued', { reason: 'released' })], stale),
      'LEASE_LOST',
    );
    await expectCode(a.transition('r1', { status: 'succeeded' }, [], { fence: stale }), 'LEASE_LOST');
    const run = await b?.transition('r1', { status: 'succeeded', finishedAt: clock.now() }, [], {
      fence: { runId: 'r1', token: second?.leaseToken ?? -1 },
    });
    expect(run?.status).toBe('succeeded');
  });

  it('advances a flow exactly once when its steps end at the same moment in two processes', async () => {
    const [a, b] = await processes(2);
    const flows = Array.from({ length: 8 }, (_, i) => `f${i}`);
    const steps = (f: string): NewRun[] => [
      { id: f, kind: 'flow', name: 'flow', input: {}, status: 'running' },
      ...['x', 'y'].map(
        (s): NewRun => ({
          id: `${f}.${s}`,
          parentId: f,
          rootId: f,
          stepId: s,
          kind: 'task',
          name: 'work',
          input: {},
          status: 'queued',
        }),
      ),
      {
        id: `${f}.z`,
        parentId: f,
        rootId: f,
        stepId: 'z',
        kind: 'task',
        name: 'work',
        input: {},
        status: 'waiting',
        waitReason: 'dependency',
        dependsOn: ['x', 'y'],
      },
    ];
    await a?.createRuns(flows.flatMap(steps), []);
    const finish = (store: PostgresStore | undefined, step: string) => async (f: string) => {
      const [run] =
        (await store?.claimRuns({
          owner: step,
          leaseMs: 60_000,
          limit: 1,
          names: ['work'],
          ids: [`${f}.${step}`],
        })) ?? [];
      await store?.transition(`${f}.${step}`, { status: 'succeeded', output: step }, [], {
        fence: { runId: `${f}.${step}`, token: run?.leaseToken ?? -1 },
      });
    };
    await Promise.all([...flows.map(finish(a, 'x')), ...flows.map(finish(b, 'y'))]);
    for (const f of flows) expect((await a?.getRun(`${f}.z`))?.status).toBe('queued');
    await Promise.all(flows.map(finish(b, 'z')));
    for (const f of flows)
      expect(await a?.getRun(f)).toMatchObject({ status: 'succeeded', output: { x: 'x', y: 'y', z: 'z' } });
    const queued = (await a?.readEvents({ limit: 10_000 }))?.filter((e) => e.type === 'run:queued');
    expect(queued?.length).toBe(flows.length);
  });

  it('hands out event ids in commit order: a reader paging by id misses nothing', async () => {
    await processes(6);
    const writers = stores.slice(0, 4);
    const readers = stores.slice(4);
    await writers[0]?.createRuns([task('e')], []);
    let writing = true;
    const appends = Promise.all(
      writers.map(async (store) => {
        for (let round = 0; round < 40; round++)
          await Promise.all(
            Array.from({ length: 3 }, () =>
              store.appendEvents([newEvent('e', 'run:queued', { reason: 'released' })]),
            ),
          );
      }),
    ).finally(() => {
      writing = false;
    });
    // Each reader pages by id while the writers commit, as a client following the stream would.
    const follow = async (reader: PostgresStore) => {
      const seen: number[] = [];
      for (;;) {
        const last = !writing;
        const page = await reader.readEvents({ afterId: seen.at(-1) ?? 0, limit: 10_000 });
        seen.push(...page.map((e) => e.id));
        if (last && page.length === 0) return seen;
      }
    };
    const seen = await Promise.all(readers.map(follow));
    await appends;
    for (const ids of seen) {
      expect(ids.length).toBe(4 * 40 * 3);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('hands each due timer and delivery to exactly one process', async () => {
    const [a, b] = await processes(2);
    await a?.createRuns([task('r1')], [], {
      timers: Array.from({ length: 50 }, (_, i) => ({
        id: `t${i}`,
        runId: 'r1',
        kind: 'k',
        dueAt: T0,
        payload: {},
        createdAt: T0,
      })),
      deliveries: Array.from({ length: 50 }, (_, i) => ({
        id: `d${i}`,
        runId: 'r1',
        kind: 'tool_result' as const,
        channel: 'callback',
        route: 'callback:default',
        target: {},
        payload: {},
        idempotencyKey: `k${i}`,
      })),
    });
    const take = (store: PostgresStore | undefined) =>
      Promise.all([0, 1, 2, 3, 4].map(() => store?.takeDueTimers(7) ?? []));
    const timers = (await Promise.all([take(a), take(b), take(a), take(b)])).flat(2).map((t) => t.id);
    expect(new Set(timers).size).toBe(timers.length);
    const sends = (
      await Promise.all(
        [a, b, a, b].map((s) =>
          Promise.all(
            [0, 1, 2].map(
              () =>
                s?.takeDueDeliveries({ limit: 5, routes: ['callback:default'], hideMs: () => 60_000 }) ?? [],
            ),
          ),
        ),
      )
    )
      .flat(2)
      .map((d) => d.id);
    expect(new Set(sends).size).toBe(sends.length);
    expect(sends.length).toBe(50);
  });

  it('runs a write that lost a deadlock again, after committing the writes before it', async () => {
    const [a] = await processes(1);
    if (!a) throw new Error('no store');
    await a.createRuns([task('x'), task('y')], []);
    await withClient(async (other) => {
      // Let the store's session be the one that detects the deadlock (and gives way).
      await other.query("SET deadlock_timeout = '20s'").catch(() => {});
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM ${schema}.runs WHERE id = 'x' FOR UPDATE`);
      // One batch: the first write locks y, the second waits for x.
      const first = a.transition('y', { status: 'cancelled' }, [
        newEvent('y', 'run:cancelled', { reason: 'y' }),
      ]);
      const second = a.transition('x', { status: 'cancelled' }, [
        newEvent('x', 'run:cancelled', { reason: 'x' }),
      ]);
      // Watched from another session: inside a transaction, pg_stat_activity is a frozen snapshot.
      await withClient(async (watcher) => {
        for (let waiting = 0; waiting === 0; ) {
          const r = await watcher.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
            [`%${schema}%`],
          );
          waiting = r.rows[0].n;
        }
      });
      // Now wait for y, held by the store: a deadlock, which the store's session detects. The store
      // gives way (its batch ran without savepoints, so it rolls back whole and releases y); the
      // other session ends; the store commits the write before the loser, then runs the loser again.
      await other.query(`SELECT 1 FROM ${schema}.runs WHERE id = 'y' FOR UPDATE`);
      await other.query('COMMIT');
      expect((await first).status).toBe('cancelled');
      expect((await second).status).toBe('cancelled');
    });
    expect((await a.readEvents({})).map((e) => e.runId)).toEqual(['y', 'x']);
  });
});
