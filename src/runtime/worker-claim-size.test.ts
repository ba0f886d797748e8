import { afterEach, describe, expect, it, vi } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineTask } from './define-task.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

describe('claims of a worker whose runs end at once', () => {
  it('are sized after those runs freed their slots, not for the room left right after they launched', async () => {
    // At concurrency 10 a claim took the 10 runs of room left while the runs it had just launched
    // still held their slots: ten runs per commit and WAL sync. Sized a turn later, before the
    // commit of those runs' writes, it takes the slots and the ready bite (issue 18 item 3).
    rt = testRuntime({ worker: { concurrency: 10 } });
    const noop = defineTask({ name: 'noop', retry: false, run: () => 'ok' });
    rt.baton.register(noop);
    await rt.baton.ready();
    const claims = vi.spyOn(rt.store, 'claimRuns');
    const runs = await Promise.all(
      Array.from({ length: 200 }, () => (rt as TestRuntime).baton.start(noop, {})),
    );
    for (const run of runs) expect(await run.result()).toMatchObject({ status: 'succeeded' });
    const polled = claims.mock.calls.map((c) => c[0]).filter((r) => r.ids === undefined);
    // The first looks while the offered runs hold every slot; each later one takes 10 slots + 10 ready.
    const limits = polled.slice(1).map((r) => r.limit);
    expect(limits.length).toBeGreaterThanOrEqual(8);
    expect(limits.every((l) => l === 20)).toBe(true);
  });
});
