/**
 * `baton worker` as an operator runs it: two worker processes on one SQLite file share the runs a
 * third process queues (it has no worker of its own); SIGTERM stops each gracefully with exit 0.
 * Bad options get exit 2 and a message naming the option.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBaton } from '../src/runtime/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import { double } from './fixtures/tasks.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-worker-'));
const db = join(dir, 'baton.db');
const tasks = join(import.meta.dirname, 'fixtures', 'tasks.ts');
const children = new Set<ChildProcess>();
const args = (...rest: string[]) => ['--import', TSX_LOADER, join(root, 'src/cli/main.ts'), ...rest];
const env = { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' };

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `baton worker --json` and resolves once it printed its ready line. */
function startWorker(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    args('--db', db, '--json', 'worker', '--tasks', tasks, '--concurrency', '4'),
    {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += String(d);
      if (out.includes('\n')) {
        const ready = JSON.parse(out.split('\n')[0] as string) as { worker: string; tasks: string[] };
        if (ready.worker === 'ready') resolve(child);
        else reject(new Error(`unexpected first line: ${out}`));
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it was ready: ${err}`)));
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('baton worker', () => {
  it('shares queued runs with another worker process and stops gracefully on SIGTERM', async () => {
    const workers = await Promise.all([startWorker(), startWorker()]);
    const store = openSqliteStore(db);
    const client = createBaton({ store, tasks: [double], worker: false, pollMs: 20 });
    try {
      const workerIds = (await store.listWorkers()).map((w) => w.id);
      expect(workerIds).toHaveLength(2);
      const runs = await Promise.all(Array.from({ length: 40 }, (_, n) => client.start(double, { n })));
      const results = await Promise.all(runs.map((r) => r.result()));
      expect(results.map((r) => r.output)).toEqual(Array.from({ length: 40 }, (_, n) => n * 2));
      const events = await store.readEvents({ limit: 10_000 });
      const started = events.filter((e) => e.type === 'attempt:started');
      // Each run executed exactly once, by one of the two worker processes.
      expect(new Set(started.map((e) => e.runId)).size).toBe(40);
      expect(started).toHaveLength(40);
      for (const e of started) expect(workerIds).toContain((e.data as { owner: string }).owner);
    } finally {
      await client.close();
      await store.close();
    }
    for (const w of workers) w.kill('SIGTERM');
    expect(await Promise.all(workers.map(exitOf))).toEqual([0, 0]);
    const after = openSqliteStore(db);
    expect(await after.listWorkers()).toEqual([]);
    await after.close();
  });

  it('refuses a bad concurrency or a module without tasks, naming the option', () => {
    const bad = spawnSync(
      process.execPath,
      args('--db', db, 'worker', '--tasks', tasks, '--concurrency', '0'),
      {
        cwd: dir,
        env,
        encoding: 'utf8',
      },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--concurrency must be a whole number');
    const none = spawnSync(process.execPath, args('--db', db, 'worker'), { cwd: dir, env, encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('--tasks');
  });
});
