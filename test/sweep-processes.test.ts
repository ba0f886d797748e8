/**
 * TTL sweeps on the sweeper thread with real processes on one SQLite file: one SIGKILLed in the
 * middle of a backlog (the file stays consistent, no partial tree, the next open sweeps the rest),
 * and two sweeping and writing at once (busy locks, nothing unexpired deleted, no write lost, no
 * hang). The sweepers are test/sweep/sweeper.ts.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/index.ts';
import { sqliteDriver } from '../src/store/sqlite/driver.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-sweep-proc-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const TREES = 1_500;
const KEPT = 50;

/** TREES expired trees (a root, two children, events and steps for each) and KEPT live ones. */
async function backlog(file: string): Promise<void> {
  const store = openSqliteStore(file);
  const runs = [];
  for (let t = 0; t < TREES + KEPT; t++) {
    const root = t < TREES ? `x${t}` : `k${t}`;
    runs.push({ id: root, kind: 'flow' as const, name: 'f', input: {}, status: 'queued' as const });
    for (const c of ['a', 'b'])
      runs.push({
        id: `${root}.${c}`,
        kind: 'task' as const,
        name: 't',
        input: {},
        status: 'queued' as const,
        parentId: root,
        rootId: root,
      });
  }
  for (let i = 0; i < runs.length; i += 600) await store.createRuns(runs.slice(i, i + 600), []);
  await store.close();
  const db = new (sqliteDriver().Database)(file);
  const now = Date.now();
  db.transaction(() => {
    const event = db.prepare(
      "INSERT INTO events (run_id, root_id, type, at, data) VALUES (?, ?, 'run.progress', ?, '{}')",
    );
    const step = db.prepare(
      'INSERT INTO steps (run_id, key, attempt, output, version, created_at) VALUES (?, ?, 1, \'"x"\', 1, ?)',
    );
    for (const r of db.prepare('SELECT id, root_id FROM runs').all() as Array<{
      id: string;
      root_id: string;
    }>) {
      for (let e = 0; e < 3; e++) event.run(r.id, r.root_id, now);
      step.run(r.id, 's1', now);
    }
    // Expired long ago (the sweepers use the system clock) or a day from now.
    db.prepare("UPDATE runs SET status = 'succeeded', expires_at = ? WHERE root_id LIKE 'x%'").run(
      now - 60_000,
    );
    db.prepare("UPDATE runs SET status = 'succeeded', expires_at = ? WHERE root_id LIKE 'k%'").run(
      now + 86_400_000,
    );
  })();
  db.close();
}

/** What the file holds: integrity, partial trees and orphans, and the runs left. */
function inspect(file: string) {
  const db = new (sqliteDriver().Database)(file, { readonly: true });
  try {
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    return {
      integrity: db.pragma('integrity_check', { simple: true }),
      // A tree is whole or gone: 3 runs, 9 events, 3 steps per root left.
      partialTrees: count(
        "SELECT count(*) FROM runs r WHERE r.parent_id IS NULL AND (r.id LIKE 'x%' OR r.id LIKE 'k%') AND ((SELECT count(*) FROM runs c WHERE c.root_id = r.id) != 3 OR (SELECT count(*) FROM events e WHERE e.root_id = r.id) != 9)",
      ),
      orphanRuns: count(
        'SELECT count(*) FROM runs c WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = c.root_id)',
      ),
      orphanEvents: count(
        'SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.run_id)',
      ),
      orphanSteps: count(
        'SELECT count(*) FROM steps s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id)',
      ),
      expiredRoots: count("SELECT count(*) FROM runs WHERE parent_id IS NULL AND id LIKE 'x%'"),
      keptRoots: count("SELECT count(*) FROM runs WHERE parent_id IS NULL AND id LIKE 'k%'"),
      written: db.prepare("SELECT id FROM runs WHERE id LIKE 'p%'").pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

interface Sweeper {
  child: ChildProcess;
  /** Resolves at the `swept` line number `n` (1-based). */
  sweeps(n: number): Promise<void>;
  /** `done <swept> <wrote>`, or the exit code and signal. */
  ended: Promise<{ swept: number; wrote: number } | { code: number | null; signal: string | null }>;
}

function startSweeper(file: string, name: string): Sweeper {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(import.meta.dirname, 'sweep', 'sweeper.ts'), file, name],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let out = '';
  let err = '';
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const sweptLines = () => out.split('\n').filter((l) => l.startsWith('swept ')).length;
  child.stdout?.on('data', (d) => {
    out += String(d);
    for (const w of waiters.splice(0))
      if (sweptLines() >= w.n) w.resolve();
      else waiters.push(w);
  });
  child.stderr?.on('data', (d) => {
    err += String(d);
  });
  const ended = new Promise<Sweeper['ended'] extends Promise<infer T> ? T : never>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      const done = /done (\d+) (\d+)/.exec(out);
      if (done) resolve({ swept: Number(done[1]), wrote: Number(done[2]) });
      else resolve({ code, signal: signal ?? `stderr: ${err}` });
    }),
  );
  return {
    child,
    ended,
    sweeps: (n) =>
      new Promise<void>((resolve, reject) => {
        if (sweptLines() >= n) return resolve();
        waiters.push({ n, resolve });
        child.on('exit', () => reject(new Error(`sweeper exited before ${n} sweeps: ${out} ${err}`)));
      }),
  };
}

describe('TTL sweeps on the sweeper thread, across processes', () => {
  it('a process SIGKILLed in the middle of a backlog leaves whole trees only, and the next open sweeps the rest', async () => {
    const file = join(dir, 'killed.db');
    await backlog(file);
    const first = startSweeper(file, 'p1');
    await first.sweeps(20);
    first.child.kill('SIGKILL');
    expect(await first.ended).toMatchObject({ signal: 'SIGKILL' });
    const after = inspect(file);
    expect(after).toMatchObject({
      integrity: 'ok',
      partialTrees: 0,
      orphanRuns: 0,
      orphanEvents: 0,
      orphanSteps: 0,
      keptRoots: KEPT,
    });
    expect(after.expiredRoots).toBeGreaterThan(0);
    expect(after.expiredRoots).toBeLessThan(TREES);
    const second = startSweeper(file, 'p2');
    expect(await second.ended).toMatchObject({ swept: after.expiredRoots * 3 });
    const end = inspect(file);
    expect(end).toMatchObject({
      integrity: 'ok',
      partialTrees: 0,
      orphanEvents: 0,
      orphanSteps: 0,
      expiredRoots: 0,
    });
    expect(end.keptRoots).toBe(KEPT);
  });

  it('two processes sweeping and writing one file at once delete every expired tree once, nothing else, and lose no write', async () => {
    const file = join(dir, 'two.db');
    await backlog(file);
    const a = startSweeper(file, 'pa');
    const b = startSweeper(file, 'pb');
    const [ea, eb] = await Promise.all([a.ended, b.ended]);
    if (!('swept' in ea) || !('swept' in eb))
      throw new Error(`a sweeper failed: ${JSON.stringify([ea, eb])}`);
    expect(ea.swept + eb.swept).toBe(TREES * 3);
    const end = inspect(file);
    expect(end).toMatchObject({
      integrity: 'ok',
      partialTrees: 0,
      orphanRuns: 0,
      orphanEvents: 0,
      orphanSteps: 0,
      expiredRoots: 0,
      keptRoots: KEPT,
    });
    expect(end.written.length).toBe(ea.wrote + eb.wrote);
  });

  it('a sweeper thread started while the file was read-only does not stay read-only once it is writable again', () => {
    // File modes do not bind root: run the sweeps as nobody then.
    const asRoot = process.getuid?.() === 0;
    const out = spawnSync(
      process.execPath,
      ['--import', TSX_LOADER, join(import.meta.dirname, 'sweep', 'read-only.ts')],
      { encoding: 'utf8', timeout: 50_000, ...(asRoot ? { uid: 65534, gid: 65534 } : {}) },
    );
    expect(out.stderr).toBe('');
    // Before, the thread kept the read-only connection SQLite gave it: every later sweep failed.
    expect(JSON.parse(out.stdout)).toEqual({
      whileReadOnly: 'STORE_UNAVAILABLE',
      afterwards: { runs: 20 },
      write: undefined,
    });
  });
});
