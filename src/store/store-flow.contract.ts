/** The Store contract, part two: flows advancing inside transactions, and the TTL sweeper. */
import { afterEach, describe, expect, it } from 'vitest';
import { newEvent } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import type { NewRun } from './records.ts';
import { type ContractHarness, T0 } from './store.contract.ts';
import type { Store } from './store.ts';

function flow(id: string, steps: Array<[string, string[]]>, options: Record<string, unknown> = {}): NewRun[] {
  return [
    { id, kind: 'flow', name: 'f', input: {}, status: 'running', options },
    ...steps.map(
      ([stepId, deps]): NewRun => ({
        id: `${id}.${stepId}`,
        parentId: id,
        rootId: id,
        stepId,
        kind: 'task',
        name: 'work',
        input: {},
        status: deps.length ? 'waiting' : 'queued',
        waitReason: deps.length ? 'dependency' : null,
        dependsOn: deps,
      }),
    ),
  ];
}

export function runStoreFlowContract(name: string, harness: ContractHarness): void {
  describe(`Store contract: ${name} — flows and sweeping`, () => {
    let store: Store;
    let clock: ManualClock;
    afterEach(async () => {
      await store?.close();
    });
    const open = async () => {
      clock = new ManualClock(T0);
      store = await harness.newStore(clock);
    };
    const finish = async (id: string, status: 'succeeded' | 'failed' | 'partial', output?: unknown) => {
      const [r] = await store
        .claimRuns({ owner: 'w', leaseMs: 1_000, limit: 50, names: ['work'] })
        .then((rs) => rs.filter((x) => x.id === id));
      const run = r ?? (await store.getRun(id));
      await store.transition(id, { status, output, finishedAt: clock.now() }, [], {
        fence: { runId: id, token: run?.leaseToken ?? 0 },
      });
    };

    it('queues a step when its dependencies end and finishes the flow with the outputs', async () => {
      await open();
      await store.createRuns(
        flow('f1', [
          ['a', []],
          ['b', ['a']],
          ['c', ['a', 'b']],
        ]),
        [],
      );
      await finish('f1.a', 'succeeded', 1);
      expect((await store.getRun('f1.b'))?.status).toBe('queued');
      expect((await store.getRun('f1.c'))?.status).toBe('waiting');
      await finish('f1.b', 'partial', 2);
      expect((await store.getRun('f1.c'))?.status).toBe('queued');
      await finish('f1.c', 'succeeded', 3);
      const f = await store.getRun('f1');
      expect(f).toMatchObject({
        status: 'partial',
        output: { a: 1, b: 2, c: 3 },
        meta: { incomplete: ['b'] },
      });
      expect(f?.expiresAt).toBe(T0 + 24 * 3_600_000);
      const types = (await store.readEvents({ rootId: 'f1' })).map((e) => `${e.runId}:${e.type}`);
      expect(types).toContain('f1.b:run:queued');
      expect(types.at(-1)).toBe('f1:run:partial');
    });

    it('cancels everything downstream of a failed step and fails the flow', async () => {
      await open();
      await store.createRuns(
        flow('f2', [
          ['a', []],
          ['b', ['a']],
          ['c', ['b']],
          ['d', []],
        ]),
        [],
      );
      await finish('f2.a', 'failed');
      expect((await store.getRun('f2.b'))?.status).toBe('cancelled');
      expect((await store.getRun('f2.c'))?.error?.code).toBe('DEPENDENCY_FAILED');
      expect((await store.getRun('f2'))?.status).toBe('running');
      await finish('f2.d', 'succeeded', 'd');
      expect((await store.getRun('f2'))?.status).toBe('failed');
    });

    it("returns the output step's output when the flow names one", async () => {
      await open();
      await store.createRuns(
        flow(
          'f3',
          [
            ['a', []],
            ['sum', ['a']],
          ],
          { outputStep: 'sum' },
        ),
        [],
      );
      await finish('f3.a', 'succeeded', 1);
      await finish('f3.sum', 'succeeded', { total: 1 });
      expect((await store.getRun('f3'))?.output).toEqual({ total: 1 });
    });

    it('cancels open steps when the flow is cancelled', async () => {
      await open();
      await store.createRuns(
        flow('f4', [
          ['a', []],
          ['b', ['a']],
        ]),
        [],
      );
      await store.transition('f4', { status: 'cancelled', finishedAt: clock.now() }, [
        newEvent('f4', 'run:cancelled', { reason: 'user' }),
      ]);
      expect((await store.listRuns({ parentId: 'f4' })).map((r) => r.status)).toEqual([
        'cancelled',
        'cancelled',
      ]);
    });

    it('sweeps expired runs with everything they own, and nothing else', async () => {
      await open();
      await store.createRuns(flow('old', [['a', []]]), [
        newEvent('old', 'run:created', { name: 'f', kind: 'flow' }),
      ]);
      await store.createRuns(
        [{ id: 'keep', kind: 'task', name: 'work', input: {}, status: 'queued' }],
        [newEvent('keep', 'run:created', { name: 'work', kind: 'task' })],
      );
      await finish('old.a', 'succeeded', 1);
      expect(await store.sweep()).toEqual({ runs: 0 });
      await clock.advance(24 * 3_600_000);
      expect(await store.sweep()).toEqual({ runs: 2 });
      expect(await store.getRun('old')).toBeUndefined();
      expect(await store.getRun('old.a')).toBeUndefined();
      expect(await store.readEvents({ rootId: 'old' })).toEqual([]);
      expect((await store.readEvents({ runId: 'keep' })).length).toBe(1);
    });

    it('lists top-level runs newest first and filters by status', async () => {
      await open();
      await store.createRuns(flow('f5', [['a', []]]), []);
      await clock.advance(1);
      await store.createRuns([{ id: 'z', kind: 'task', name: 'work', input: {}, status: 'queued' }], []);
      expect((await store.listRuns()).map((r) => r.id)).toEqual(['z', 'f5']);
      expect((await store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual(['f5']);
      expect((await store.listRuns({ parentId: 'f5' })).map((r) => r.id)).toEqual(['f5.a']);
      expect(await store.countRuns()).toEqual({ running: 1, queued: 2 });
    });
  });
}
