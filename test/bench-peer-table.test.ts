/** The peer table sets each of Baton's figures beside the best peer's in the right direction. */
import { expect, it } from 'vitest';
import { peerRows } from '../bench/_peer-table.ts';

it('takes the highest peer rate as best, and the fewest idle queries per second', () => {
  const rows = peerRows(
    new Map([
      ['peers.pg_throughput_c10_per_s.baton', 800],
      ['peers.pg_throughput_c10_per_s.pgboss', 2_000],
      ['peers.pg_throughput_c10_per_s.graphile_worker', 200],
      ['peers.pg_idle_queries_per_s.baton', 1.4],
      ['peers.pg_idle_queries_per_s.pgboss', 20],
      ['peers.pg_idle_queries_per_s.graphile_worker', 5],
      ['peers.pg_claim_100k_ms.baton', 3],
      ['peers.pg_claim_100k_ms.pgboss', 300],
    ]),
  );
  const by = new Map(rows.map((r) => [r.figure, r]));
  expect(by.get('pg_throughput_c10_per_s')).toMatchObject({ peer: 'pgboss', advantage: 0.4 });
  expect(by.get('pg_idle_queries_per_s')).toMatchObject({ peer: 'graphile_worker' });
  expect(by.get('pg_idle_queries_per_s')?.advantage).toBeCloseTo(5 / 1.4);
  expect(by.get('pg_claim_100k_ms')).toMatchObject({ peer: 'pgboss', advantage: 100 });
});
