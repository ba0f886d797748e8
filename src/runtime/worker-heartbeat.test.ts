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

it('stops an attempt whose lease it fails to renew before the lease ends, not after', async () => {
  rt = testRuntime({ worker: { leaseMs: 3_000 } });
  let aborted: unknown;
  let abortedAt = -1;
  const long = defineTask({
    name: 'long',
    run: async (_: unknown, ctx) => {
      // The first attempt's (the run is taken back after its lease and tried again, failing too).
      ctx.signal.addEventListener('abort', () => {
        if (abortedAt >= 0) return;
        aborted = ctx.signal.reason;
        abortedAt = rt.clock.now();
      });
      await ctx.delay(3_600_000);
    },
  });
  rt.baton.register(long);
  await rt.baton.ready();
  let hang = false;
  let lastRenewal = -1;
  const heartbeat = rt.store.heartbeat.bind(rt.store);
  rt.store.heartbeat = (owner, leaseMs, active) => {
    if (hang) return Promise.reject(new Error('connection terminated'));
    lastRenewal = rt.clock.now();
    return heartbeat(owner, leaseMs, active);
  };
  await rt.baton.start(long, {});
  const startedAt = rt.clock.now();
  // Renewals go through while the database answers...
  await rt.clock.advance(6_000);
  expect(lastRenewal - startedAt).toBeGreaterThan(4_000);
  expect(aborted).toBeUndefined();
  // ...then fail (the server is gone): the attempt is stopped while its lease still runs, so no
  // other worker can have taken the run yet (before: it ran on past the lease's end).
  hang = true;
  await rt.clock.advance(6_000);
  expect(aborted).toMatchObject({ code: 'LEASE_LOST' });
  expect(abortedAt).toBeLessThan(lastRenewal + 3_000);
  expect(abortedAt).toBeGreaterThan(lastRenewal + 1_000);
});
