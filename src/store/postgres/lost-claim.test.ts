/**
 * A named claim answers before its commit is durable (claims.ts claimAlone): a server crash can lose
 * it, and the run's next claim then gives the same lease token again. Here the crash is simulated by
 * putting the row back as the lost claim found it; the lost claim's fence must then be refused
 * whoever claims the run next, the same worker included.
 */
import { expect, it } from 'vitest';
import { newEvent } from '../../core/index.ts';
import { ManualClock } from '../../time/index.ts';
import type { Fence } from '../records.ts';
import { expectCode, T0, task } from '../store.contract.ts';
import type { Store } from '../store.ts';
import { describePostgres, testSchemas, withClient } from './fixtures/pg-test-server.ts';

const schemas = testSchemas();

/** The row as it was before the claim committed: what a crash that lost the claim leaves. */
async function loseClaim(schema: string, runId: string): Promise<void> {
  await withClient((c) =>
    c.query(
      `UPDATE ${schema}.runs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL,
         lease_token = lease_token - 1, lease_claim = NULL, attempt = attempt - 1, started_at = NULL,
         deadline_at = NULL WHERE id = $1`,
      [runId],
    ),
  );
}

async function expectRefused(store: Store, stale: Fence): Promise<void> {
  await expectCode(
    store.recordStep(stale, { key: 's', attempt: 1, output: 1, version: 1 }, []),
    'LEASE_LOST',
  );
  await expectCode(
    store.saveCheckpoint(stale, { attempt: 1, state: {}, record: {}, version: 1 }, []),
    'LEASE_LOST',
  );
  await expectCode(store.addPartial(stale, 1, ['x'], []), 'LEASE_LOST');
  await expectCode(
    store.appendEvents([newEvent(stale.runId, 'log:message', { level: 'info', message: 'x' })], stale),
    'LEASE_LOST',
  );
  await expectCode(
    store.transition(stale.runId, { status: 'succeeded', output: 'stale' }, [], { fence: stale }),
    'LEASE_LOST',
  );
}

describePostgres('Postgres: a claim lost in a crash', () => {
  for (const next of ['the same worker', 'another worker'] as const)
    it(`refuses the lost claim's writes once ${next} claims the run again with the same token`, async () => {
      const schema = schemas.fresh();
      const store = await schemas.open(new ManualClock(T0), schema);
      try {
        await store.createRuns([task('r1')], []);
        const [lost] = await store.claimRuns({
          owner: 'w1',
          leaseMs: 60_000,
          limit: 1,
          names: ['work'],
          claim: 'c1',
        });
        if (!lost) throw new Error('not claimed');
        const stale: Fence = { runId: 'r1', token: lost.leaseToken, claim: 'c1' };
        await loseClaim(schema, 'r1');
        const owner = next === 'the same worker' ? 'w1' : 'w2';
        const [again] = await store.claimRuns({
          owner,
          leaseMs: 60_000,
          limit: 1,
          names: ['work'],
          claim: 'c2',
        });
        // The same token and attempt as the lost claim: the token alone cannot tell them apart.
        expect(again).toMatchObject({
          leaseToken: lost.leaseToken,
          attempt: lost.attempt,
          leaseOwner: owner,
        });
        await expectRefused(store, stale);
        // Nor can a fence that names no claim (an unnamed claim is durable before it answers).
        await expectRefused(store, { runId: 'r1', token: lost.leaseToken });
        // The new claim's attempt writes as usual.
        const fresh: Fence = { runId: 'r1', token: lost.leaseToken, claim: 'c2' };
        await store.recordStep(fresh, { key: 's', attempt: 1, output: 2, version: 1 }, []);
        const done = await store.transition('r1', { status: 'succeeded', output: 'fresh' }, [], {
          fence: fresh,
        });
        expect(done).toMatchObject({ status: 'succeeded', output: 'fresh' });
        expect((await store.getSteps('r1')).map((s) => s.output)).toEqual([2]);
      } finally {
        await store.close();
      }
    });

  it('fences a batch of writes merged into one statement by claim as well as token', async () => {
    const schema = schemas.fresh();
    const store = await schemas.open(new ManualClock(T0), schema);
    try {
      await store.createRuns([task('a'), task('b')], []);
      const lost = await store.claimRuns({
        owner: 'w1',
        leaseMs: 60_000,
        limit: 2,
        names: ['work'],
        claim: 'c1',
      });
      expect(lost).toHaveLength(2);
      await loseClaim(schema, 'a');
      await store.claimRuns({ owner: 'w1', leaseMs: 60_000, limit: 1, names: ['work'], claim: 'c2' });
      // Both in one turn: one batch, whose fence checks go in one statement (merged-writes.ts).
      const event = (id: string) => [newEvent(id, 'log:message', { level: 'info', message: id })];
      const [a, b] = await Promise.allSettled([
        store.appendEvents(event('a'), { runId: 'a', token: 1, claim: 'c1' }),
        store.appendEvents(event('b'), { runId: 'b', token: 1, claim: 'c1' }),
      ]);
      expect(a.status === 'rejected' && (a.reason as { code?: string }).code).toBe('LEASE_LOST');
      expect(b.status).toBe('fulfilled');
    } finally {
      await store.close();
    }
  });
});
