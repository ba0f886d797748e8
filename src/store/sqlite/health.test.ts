import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteHealth, WAL_WARNING_BYTES } from './health.ts';
import { openSqliteStore } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-sqlite-health-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const figures = {
  commits: 12,
  syncs: 5,
  checkpoints: { offLoop: 3, held: 1 },
  holds: { lastMs: 0.4, maxMs: 6.25, overSlice: 2 },
  sweeps: { sweeps: 7, heldLastMs: 0.5, heldMaxMs: 1.75 },
};

describe('the SQLite store on /health and /metrics', () => {
  it('reports how long writes held the event loop, commits, syncs, checkpoints and the WAL size', () => {
    const health = sqliteHealth(figures, 4096);
    expect(health.warnings).toEqual([]);
    const value = (name: string, held?: string) =>
      health.gauges.find((g) => g.name === name && (held === undefined || g.labels?.held === held))?.value;
    expect(value('baton_sqlite_write_hold_max_ms')).toBe(6.25);
    expect(value('baton_sqlite_write_hold_last_ms')).toBe(0.4);
    expect(value('baton_sqlite_write_holds_over_slice')).toBe(2);
    expect(value('baton_sqlite_commits')).toBe(12);
    expect(value('baton_sqlite_wal_syncs')).toBe(5);
    expect(value('baton_sqlite_checkpoints', 'no')).toBe(2);
    expect(value('baton_sqlite_checkpoints', 'yes')).toBe(1);
    expect(value('baton_sqlite_wal_bytes')).toBe(4096);
    expect(value('baton_sqlite_sweeps')).toBe(7);
    expect(value('baton_sqlite_sweep_writes_held_max_ms')).toBe(1.75);
  });

  it('warns when the WAL has outgrown what checkpoints keep it to', () => {
    expect(sqliteHealth(figures, WAL_WARNING_BYTES).warnings).toEqual([]);
    const [warning] = sqliteHealth(figures, 3 * WAL_WARNING_BYTES).warnings;
    expect(warning?.code).toBe('wal_large');
    expect(warning?.message).toMatch(/192 MB.*reader/);
  });

  it('reads the figures off a real file: the holds of its write transactions and its WAL', async () => {
    const store = openSqliteStore(join(dir, 'held.db'));
    const runs = Array.from({ length: 200 }, (_, i) => ({
      id: `r${i}`,
      kind: 'task' as const,
      name: 'work',
      input: { i },
      status: 'queued' as const,
    }));
    await store.createRuns(runs, []);
    const stats = store.commitStats;
    expect(stats.holds.maxMs).toBeGreaterThan(0);
    expect(stats.holds.lastMs).toBeLessThanOrEqual(stats.holds.maxMs);
    const health = await store.health();
    const gauge = (name: string) => health.gauges.find((g) => g.name === name)?.value;
    expect(gauge('baton_sqlite_commits')).toBeGreaterThanOrEqual(1);
    expect(gauge('baton_sqlite_write_hold_max_ms')).toBeGreaterThan(0);
    expect(gauge('baton_sqlite_wal_bytes')).toBeGreaterThan(0);
    expect(health.warnings).toEqual([]);
    await store.close();
    await expect(store.health()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});
