/** The Store contract, part three: effects written with run changes, and the delivery queue. */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../time/index.ts';
import type { NewDelivery } from './records.ts';
import { type ContractHarness, T0, task } from './store.contract.ts';
import type { Store } from './store.ts';

const OPS = 'webhook:ops http://127.0.0.1:1/hook';
/** Takes what the ops webhook serves, hiding each for `ms`. */
const take = (limit: number, ms: number, routes: readonly string[] = [OPS]) => ({
  limit,
  routes,
  hideMs: () => ms,
});

const delivery = (id: string, key = id): NewDelivery => ({
  id,
  runId: 'r1',
  kind: 'tool_result',
  channel: 'webhook:ops',
  route: OPS,
  target: { url: 'http://127.0.0.1:1/hook' },
  payload: { type: 'tool_result', result: 42 },
  idempotencyKey: key,
});

export function runStoreDeliveryContract(name: string, harness: ContractHarness): void {
  describe(`Store contract: ${name} — effects and deliveries`, () => {
    let store: Store;
    let clock: ManualClock;
    afterEach(async () => {
      await store?.close();
    });
    const open = async () => {
      clock = new ManualClock(T0);
      store = await harness.newStore(clock);
    };

    it('writes timers with the runs that need them, in one transaction', async () => {
      await open();
      await store.createRuns([task('r1')], [], {
        timers: [
          {
            id: 'due:r1',
            runId: 'r1',
            kind: 'delivery-due',
            dueAt: T0 + 120_000,
            payload: {},
            createdAt: T0,
          },
        ],
      });
      expect(await store.nextWakeAt()).toBe(T0 + 120_000);
      await store.transition(
        'r1',
        { status: 'cancelled', finishedAt: T0 },
        [],
        {},
        { cancelTimers: ['due:r1'] },
      );
      expect(await store.nextWakeAt()).toBeUndefined();
    });

    it('hands each delivery out once, hides it while it is sent, and retries it with the same key', async () => {
      await open();
      await store.createRuns([task('r1')], []);
      await store.transition(
        'r1',
        { status: 'cancelled', finishedAt: T0 },
        [],
        {},
        {
          deliveries: [delivery('d1'), delivery('d2'), delivery('d3', 'd1')],
        },
      );
      expect((await store.listDeliveries('r1')).map((d) => d.id)).toEqual(['d1', 'd2']);
      const [a, b] = await Promise.all([
        store.takeDueDeliveries(take(10, 30_000)),
        store.takeDueDeliveries(take(10, 30_000)),
      ]);
      expect([...(a ?? []), ...(b ?? [])].map((d) => d.id).sort()).toEqual(['d1', 'd2']);
      expect(await store.takeDueDeliveries(take(10, 30_000))).toEqual([]);
      expect(await store.nextWakeAt([OPS])).toBe(T0 + 30_000);
      await store.settleDelivery('d1', { status: 'delivered' });
      await store.settleDelivery('d2', { status: 'retry', error: 'HTTP 503', retryAt: T0 + 2_000 });
      await clock.advance(2_000);
      const again = await store.takeDueDeliveries(take(10, 30_000));
      expect(again.map((d) => [d.id, d.attempts, d.idempotencyKey, d.lastError])).toEqual([
        ['d2', 2, 'd2', 'HTTP 503'],
      ]);
      await store.settleDelivery('d2', { status: 'failed', error: 'gave up' });
      const all = await store.listDeliveries('r1');
      expect(all.map((d) => [d.id, d.status])).toEqual([
        ['d1', 'delivered'],
        ['d2', 'failed'],
      ]);
      expect(all[0]?.deliveredAt).toBe(T0);
    });

    it('makes a delivery that was being sent by a crashed sender visible again', async () => {
      await open();
      await store.createRuns([task('r1')], [], { deliveries: [delivery('d1')] });
      expect((await store.takeDueDeliveries(take(10, 5_000))).length).toBe(1);
      await clock.advance(5_000);
      expect((await store.takeDueDeliveries(take(10, 5_000))).map((d) => d.attempts)).toEqual([2]);
    });

    it('hands out only the routes the caller serves; the others stay pending and do not wake it', async () => {
      await open();
      const callback = { ...delivery('c1'), channel: 'callback', route: 'callback:default' };
      const other = { ...delivery('w2'), route: 'webhook:ops http://10.0.0.1/elsewhere' };
      await store.createRuns([task('r1')], [], { deliveries: [callback, other, delivery('w1')] });
      expect(await store.takeDueDeliveries(take(10, 1_000, []))).toEqual([]);
      expect(await store.nextWakeAt(['webhook:nobody'])).toBeUndefined();
      expect(await store.nextWakeAt()).toBeUndefined();
      expect((await store.takeDueDeliveries(take(10, 1_000))).map((d) => [d.id, d.route])).toEqual([
        ['w1', OPS],
      ]);
      const cb = await store.takeDueDeliveries(take(10, 1_000, ['callback:default']));
      expect(cb.map((d) => [d.id, d.channel, d.attempts])).toEqual([['c1', 'callback', 1]]);
      const rest = await store.listDeliveries('r1');
      expect(rest.find((d) => d.id === 'w2')).toMatchObject({ status: 'pending', attempts: 0, nextAt: T0 });
    });

    it('hides each taken delivery for as long as its route and attempt say', async () => {
      await open();
      const cb = { ...delivery('c1'), channel: 'callback', route: 'callback:default' };
      await store.createRuns([task('r1')], [], { deliveries: [cb, delivery('w1')] });
      const seen: Array<[string, number]> = [];
      const taken = await store.takeDueDeliveries({
        limit: 10,
        routes: [OPS, 'callback:default'],
        hideMs: (route, attempt) => {
          seen.push([route, attempt]);
          return route === OPS ? 11_000 : 31_000;
        },
      });
      expect(taken.map((d) => [d.id, d.nextAt])).toEqual([
        ['c1', T0 + 31_000],
        ['w1', T0 + 11_000],
      ]);
      expect(seen.sort()).toEqual([
        ['callback:default', 1],
        [OPS, 1],
      ]);
      expect(await store.nextWakeAt([OPS, 'callback:default'])).toBe(T0 + 11_000);
      await clock.advance(11_000);
      expect(
        (await store.takeDueDeliveries(take(10, 1_000, [OPS, 'callback:default']))).map((d) => [
          d.id,
          d.attempts,
        ]),
      ).toEqual([['w1', 2]]);
    });
  });
}
