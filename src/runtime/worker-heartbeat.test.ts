/**
 * A worker heartbeats every third of a lease while it holds runs; holding none, it only refreshes
 * its own row once a safety poll (an idle process's queries are its whole load on a shared server).
 */
import { afterEach, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

it('beats once a safety poll while idle and every third of a lease while it holds a run', async () => {
  rt = testRuntime({ worker: { leaseMs: 3_000, safetyPollMs: 6_000 } });
  const long = defineTask({ name: 'long', run: async (_: unknown, ctx) => ctx.delay(3_600_000) });
  rt.baton.register(long);
  await rt.baton.ready();
  const beats: number[] = [];
  const heartbeat = rt.store.heartbeat.bind(rt.store);
  rt.store.heartbeat = (owner, leaseMs, active) => {
    beats.push(active.length);
    return heartbeat(owner, leaseMs, active);
  };
  await rt.clock.advance(12_000);
  // Every 1 s would be 12 beats.
  expect(beats.length).toBeLessThanOrEqual(2);
  beats.length = 0;
  await rt.baton.start(long, {});
  await rt.clock.advance(3_000);
  expect(beats.filter((n) => n === 1).length).toBeGreaterThanOrEqual(3);
});
