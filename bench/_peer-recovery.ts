/**
 * Killed-worker recovery, Baton beside BullMQ and DBOS, with real processes: a worker process takes
 * a job whose body never ends and is SIGKILLed; the clock starts when the kernel reports it dead,
 * and stops when a freshly spawned worker process starts the same job's body again. Process start,
 * module loading (`import` of the built package) and the store's recovery are all inside: that is
 * what a user waits for after a crash.
 *
 * Settings: Baton's defaults (a restarted worker on the same host sees the owner's pid gone). BullMQ
 * with lockDuration 2 s and stalledInterval 1 s (its defaults, 30 s and 30 s, give 30–60 s). DBOS's
 * defaults (a process launching with the same executor id recovers its pending workflows).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';

const ROOT = join(import.meta.dirname, '..');
const WORKERS = join(import.meta.dirname, '_peer-workers');
/** A child that has not started the body by then is broken, not slow. */
const CHILD_TIMEOUT_MS = 120_000;
export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DBOS_SCHEMA = 'baton_bench_dbos';
const BULL_LOCK_MS = 2_000;
const BULL_STALLED_MS = 1_000;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && e.name.endsWith('.ts'))
      newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  return newest;
}

/** The built package (dist/index.js), rebuilt when any source is newer: users import the build, not src. */
export function builtBaton(): string {
  const entry = join(ROOT, 'dist', 'index.js');
  if (!existsSync(entry) || statSync(entry).mtimeMs < newestMtime(join(ROOT, 'src'))) {
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bench: npm run build failed:\n${r.stdout}\n${r.stderr}`);
  }
  return pathToFileURL(entry).href;
}

interface Child {
  proc: ChildProcess;
  /** Resolves with performance.now() when the child prints `got …`. */
  got: Promise<number>;
}

function spawnWorker(script: string, args: string[]): Child {
  const proc = spawn(process.execPath, [join(WORKERS, script), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const got = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(
        new Error(
          `bench: ${script} ${args.join(' ')} did not start the job in ${CHILD_TIMEOUT_MS} ms: ${stderr}`,
        ),
      );
    }, CHILD_TIMEOUT_MS);
    proc.stdout?.on('data', (d) => {
      if (String(d).includes('got ')) {
        clearTimeout(timer);
        resolve(performance.now());
      }
    });
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`bench: ${script} exited (${code ?? signal}) before starting the job: ${stderr}`));
    });
  });
  // The exit after `got` (our own SIGKILL) must not surface as an unhandled rejection.
  got.catch(() => {});
  return { proc, got };
}

function killHard(proc: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(performance.now());
    proc.once('exit', () => resolve(performance.now()));
    proc.kill('SIGKILL');
  });
}

/** Holds with the first process, kills it, and times the second one until it starts the body again. */
async function killAndRetake(script: string, hold: string[], take: string[]): Promise<number> {
  const first = spawnWorker(script, hold);
  const second: Child[] = [];
  try {
    await first.got;
    const dead = await killHard(first.proc);
    second.push(spawnWorker(script, take));
    return (await second[0]!.got) - dead;
  } finally {
    await killHard(first.proc);
    for (const c of second) await killHard(c.proc);
  }
}

/** `url`: the built package's entry (another build, for an A/B). @default builtBaton() */
export async function batonRecoveryMs(dir: string, round: number, url = builtBaton()): Promise<number> {
  const file = join(dir, `recovery-${round}.db`);
  return killAndRetake('baton.mjs', [url, file, 'hold'], [url, file, 'take']);
}

export async function bullmqRecoveryMs(round: number): Promise<number> {
  const name = `baton-bench-recovery-${process.pid}-${round}-${Date.now()}`;
  const connection = new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  try {
    await queue.add('hang', {});
    const args = [name, String(BULL_LOCK_MS), String(BULL_STALLED_MS)];
    return await killAndRetake('bullmq.mjs', args, args);
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  }
}

export async function dbosRecoveryMs(round: number): Promise<number> {
  // A workflow id is never run twice (a second start returns the first's handle): unique per call.
  const id = `baton-bench-recovery-${process.pid}-${round}-${Date.now()}`;
  try {
    return await killAndRetake(
      'dbos.mjs',
      [PG_URL, DBOS_SCHEMA, 'hold', id],
      [PG_URL, DBOS_SCHEMA, 'take', id],
    );
  } finally {
    // The workflow never ends: cancel it so later launches do not recover it again.
    const client = new pg.Client(PG_URL);
    await client.connect();
    await client.query(
      `UPDATE ${DBOS_SCHEMA}.workflow_status SET status = 'CANCELLED' WHERE workflow_uuid = $1`,
      [id],
    );
    await client.end();
  }
}
