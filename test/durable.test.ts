/**
 * Durable primitives survive SIGKILL (real processes, one SQLite file): a run sleeping in
 * `ctx.sleep` when its worker is killed wakes on time in the next worker, and no step body runs twice.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Baton, createBaton } from '../src/index.ts';
import { openSqliteStore, type RunRecord, type SqliteStore } from '../src/store/index.ts';
import { approver, parent, sleeper, tasks } from './durable/tasks.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-durable-'));
const db = join(dir, 'durable.db');
const log = join(dir, 'durable.log');
const children = new Set<ChildProcess>();
process.env.BATON_DURABLE_LOG = log;

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startWorker(): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(import.meta.dirname, 'durable', 'worker.ts'), db, log],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, BATON_DURABLE_LOG: log } },
  );
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  return until(
    () => readFileSync(log, 'utf8').includes(`ready ${child.pid}\n`),
    `worker ${child.pid} ready (${stderr})`,
  ).then(() => child);
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * One scenario on a fresh log: no worker left from an earlier one, a first worker started, and a
 * runtime in this process that only starts runs and reads the store (the workers execute them).
 */
async function withWorker(
  scenario: (s: { store: SqliteStore; baton: Baton; first: ChildProcess }) => Promise<void>,
): Promise<void> {
  for (const c of [...children]) await killHard(c);
  writeFileSync(log, '');
  const store = openSqliteStore(db);
  const baton = createBaton({ store, tasks, worker: false });
  try {
    await scenario({ store, baton, first: await startWorker() });
  } finally {
    await baton.close();
    await store.close();
  }
}

/** SIGKILLs a worker and starts the next one on the same file. */
async function killAndRestart(worker: ChildProcess): Promise<void> {
  await killHard(worker);
  await startWorker();
}

function untilRun(
  store: SqliteStore,
  id: string,
  check: (run: RunRecord | undefined) => boolean,
  what: string,
): Promise<void> {
  return until(async () => check(await store.getRun(id)), what);
}

const execs = (runId: string, step: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith(`exec ${runId} ${step} `)).length;

describe('durable primitives across SIGKILL', () => {
  it('a run sleeping when its worker is SIGKILLed wakes on time in the next worker; no step runs twice', async () => {
    await withWorker(async ({ store, baton, first }) => {
      const run = await baton.start(sleeper, { ms: 4_000 });
      await untilRun(store, run.id, (r) => r?.status === 'waiting', 'the run to sleep');
      const sleeping = await store.getRun(run.id);
      expect(sleeping).toMatchObject({ waitReason: 'timer', leaseOwner: null });
      const wakeAt = sleeping?.wakeAt as number;
      await killAndRestart(first);
      await untilRun(store, run.id, (r) => r?.status === 'succeeded', 'the run to finish');
      const done = await store.getRun(run.id);
      const out = done?.output as { before: number; after: number };
      expect(out.after).toBeGreaterThanOrEqual(wakeAt);
      const events = await store.readEvents({ runId: run.id, limit: 1000 });
      const started = events.filter((e) => e.type === 'attempt:started');
      expect(started).toHaveLength(2);
      // Woken on time: the second attempt began within the worker's poll of the wake time (plus load).
      const lateness = (started[1]?.at as number) - wakeAt;
      expect(lateness).toBeGreaterThanOrEqual(0);
      expect(lateness).toBeLessThan(1_000);
      expect(execs(run.id, 'before')).toBe(1);
      expect(execs(run.id, 'after')).toBe(1);
    });
  }, 60_000);

  it('a child running when the worker is SIGKILLed finishes in the next worker and wakes its parent; no step runs twice', async () => {
    await withWorker(async ({ store, baton, first }) => {
      const run = await baton.start(parent, {});
      const childId = `${run.id}:invoke-1`;
      await until(() => execs(childId, 'a') === 1, 'the child to start');
      await untilRun(store, run.id, (r) => r?.waitReason === 'child', 'the parent to wait');
      expect((await store.getRun(childId))?.status).toBe('running');
      await killAndRestart(first);
      await untilRun(store, run.id, (r) => r?.status === 'succeeded', 'the parent to finish');
      expect((await store.getRun(run.id))?.output).toBe(42);
      expect(await store.listRuns({ parentId: run.id })).toHaveLength(1);
      for (const [id, step] of [
        [run.id, 'pre'],
        [run.id, 'post'],
        [childId, 'a'],
        [childId, 'b'],
      ] as const)
        expect(execs(id, step), `${id} ${step}`).toBe(1);
    });
  }, 60_000);

  it('a run waiting for a signal when its worker is SIGKILLed gets the signal sent with `baton signal`, once', async () => {
    await withWorker(async ({ store, baton, first }) => {
      const run = await baton.start(approver, {});
      await untilRun(store, run.id, (r) => r?.waitReason === 'signal', 'the run to wait');
      await killHard(first);
      const cli = spawnSync(
        process.execPath,
        [
          '--import',
          TSX_LOADER,
          join(import.meta.dirname, '..', 'src/cli/main.ts'),
          'signal',
          run.id,
          'approve',
          '--payload',
          '{"ok":true}',
          '--db',
          db,
        ],
        { env: { ...process.env, BATON_CLI_MAIN: '1', NO_COLOR: '1' }, encoding: 'utf8', timeout: 30_000 },
      );
      expect(cli.stderr).toBe('');
      expect(cli.status).toBe(0);
      expect(cli.stdout).toMatch(/signal approve sent to run/);
      // Woken by the signal (queued), though no worker is alive to run it yet.
      expect((await store.getRun(run.id))?.status).toBe('queued');
      await startWorker();
      await untilRun(store, run.id, (r) => r?.status === 'succeeded', 'the run to finish');
      expect((await store.getRun(run.id))?.output).toEqual({ ok: true });
      expect(execs(run.id, 'asked')).toBe(1);
      expect(execs(run.id, 'after')).toBe(1);
      expect(await store.listSignals(run.id, { unread: true })).toEqual([]);
    });
  }, 60_000);
});
