import { afterEach, describe, expect, it } from 'vitest';
import { msUntilNextTimer, systemClock, type TimerHandle } from './clock.ts';
import { DueHeap } from './due-heap.ts';
import { Lane, sliceBudget } from './lane.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

let armed: TimerHandle[] = [];
afterEach(() => {
  for (const h of armed) systemClock.clearTimer(h);
  armed = [];
});

describe('DueHeap', () => {
  it('gives the earliest live due time, skipping cleared and fired entries', () => {
    const heap = new DueHeap();
    const live = new Map<number, { due: number }>();
    const dues = [50, 10, 70, 30, 90, 20, 60, 40, 80, 0];
    dues.forEach((due, id) => {
      heap.push(id, due);
      live.set(id, { due });
    });
    const order: number[] = [];
    for (;;) {
      const due = heap.earliest(live);
      if (due === undefined) break;
      order.push(due);
      const [id] = [...live].find(([, t]) => t.due === due) as [number, { due: number }];
      live.delete(id);
    }
    expect(order).toEqual([...dues].sort((a, b) => a - b));
  });

  it('drops garbage on rebuild', () => {
    const heap = new DueHeap();
    const live = new Map<number, { due: number }>();
    for (let id = 0; id < 100; id++) heap.push(id, id);
    live.set(42, { due: 42 });
    live.set(7, { due: 7 });
    heap.rebuild(live);
    expect(heap.size).toBe(2);
    expect(heap.earliest(live)).toBe(7);
  });
});

describe('msUntilNextTimer', () => {
  it('follows the timers armed and cleared through the system clock', () => {
    const before = msUntilNextTimer();
    const h = systemClock.setTimer(60_000, () => {});
    armed.push(h);
    const left = msUntilNextTimer();
    expect(left).toBeLessThanOrEqual(60_000);
    expect(left).toBeGreaterThan(Math.min(before, 59_000) - 1);
    systemClock.clearTimer(h);
    expect(msUntilNextTimer()).toBe(before);
  });
});

describe('Lane', () => {
  it('releases callers in order, never in the turn they asked in', async () => {
    const lane = new Lane(1_000);
    const released: number[] = [];
    const all = [1, 2, 3].map((i) => lane.turn().then(() => released.push(i)));
    await Promise.resolve();
    expect(released).toEqual([]);
    await Promise.all(all);
    expect(released).toEqual([1, 2, 3]);
  });

  it('releases one caller per turn while a timer is due', async () => {
    expect(sliceBudget(1_000, () => -3)).toBe(0);
    const lane = new Lane(1_000, () => 0);
    const released: number[] = [];
    for (const i of [1, 2, 3]) void lane.turn().then(() => released.push(i));
    await nextTurn();
    expect(released).toEqual([1]);
    await nextTurn();
    expect(released).toEqual([1, 2]);
  });

  it('runs a deferred step at once on an idle lane, the rest a slice a turn, and goes on past a step that throws', async () => {
    let now = 0;
    // Each step costs 1 ms of the lane's clock; a slice is 2 ms.
    const lane = new Lane(
      2,
      () => Number.POSITIVE_INFINITY,
      () => now,
    );
    const ran: number[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      lane.defer(() => {
        now++;
        ran.push(1);
      });
      expect(ran).toEqual([1]);
      lane.defer(() => {
        now++;
        throw new Error('step 2');
      });
      for (const i of [3, 4, 5])
        lane.defer(() => {
          now++;
          ran.push(i);
        });
      await Promise.resolve();
      await Promise.resolve();
      // 1 and 2 spent the 2 ms slice: 3 waits for the next turn, after due timers could fire.
      expect(ran).toEqual([1]);
      await nextTurn();
      expect(ran).toEqual([1, 3, 4]);
      await nextTurn();
      expect(ran).toEqual([1, 3, 4, 5]);
      expect(lane.queued).toBe(0);
      expect(uncaught).toEqual([new Error('step 2')]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('releases everyone queued in one turn when nothing is due and the slice allows', async () => {
    const lane = new Lane(1_000, () => Number.POSITIVE_INFINITY);
    const released: number[] = [];
    for (let i = 0; i < 20; i++) void lane.turn().then(() => released.push(i));
    await nextTurn();
    expect(released).toHaveLength(20);
    expect(lane.queued).toBe(0);
  });
});
