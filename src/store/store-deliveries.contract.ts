/** The Store contract, part three: effects written with run changes, and the delivery queue. */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../time/index.ts';
import type { NewDelivery } from './records.ts';
import { type ContractHarness, T0, task } from './store.contract.ts';
import type { Store } from './store.ts';

const delivery = (id: string, key = id): NewDelivery => ({
  id,
  runId: 'r1',
  kind: 'tool_result',
  channel: 'webhook:ops',
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
        store.takeDueDeliveries(10, 30_000),
        store.takeDueDeliveries(10, 30_000),
      ]);
      expect([...(a ?? []), ...(b ?? [])].map((d) => d.id).sort()).toEqual(['d1', 'd2']);
      expect(await store.takeDueDeliveries(10, 30_000)).toEqual([]);
      expect(await store.nextWakeAt()).toBe(T0 + 30_000);
      await store.settleDelivery('d1', { status: 'delivered' });
      await store.settleDelivery('d2', { status: 'retry', error: 'HTTP 503', retryAt: T0 + 2_000 });
      await clock.advance(2_000);
      const again = await store.takeDueDeliveries(10, 30_000);
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
      expect((await store.takeDueDeliveries(10, 5_000)).length).toBe(1);
      await clock.advance(5_000);
      expect((await store.takeDueDeliveries(10, 5_000)).map((d) => d.attempts)).toEqual([2]);
    });
  });
}
