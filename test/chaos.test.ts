/**
 * Chaos test with real processes (issue 11, "keep it found"): four worker processes share one
 * SQLite file and run 24 flows (a → b, c → d; every step memoizes three steps). Workers are
 * SIGKILLed at random moments and restarted; one worker's connection cannot grow the file
 * (`PRAGMA max_page_count`, SQLite's full disk without root), so its writes fail with SQLITE_FULL
 * while the others go on. Afterwards: `PRAGMA integrity_check` is ok, every flow and step finished
 * exactly once (each memoized step has one record and its body never ran again after the record
 * committed), every SQLITE_FULL the runs saw is named as such, and copies of the file with flipped
 * bytes are refused with STORE_CORRUPT, never a raw SQLite error.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBaton, isBatonError } from '../src/index.ts';
import { openSqliteStore, type SqliteStore, sqliteDriver } from '../src/store/index.ts';
import { chaosFlow, chaosStep, FLOW_STEPS, STEPS_PER_TASK } from './chaos/flow.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const FLOWS = 40;
const KILLS = 6;
const dir = mkdtempSync(join(tmpdir(), 'baton-chaos-'));
const db = join(dir, 'chaos.db');
const log = join(dir, 'chaos.log');
const children = new Set<ChildProcess>();
const fullDiskLog: string[] = [];

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Worker {
  child: ChildProcess;
  mode: 'normal' | 'full';
  stderr: string;
}

/** Starts a worker without waiting for it: killing workers as they come up is part of the chaos. */
function startWorker(mode: Worker['mode']): Worker {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(import.meta.dirname, 'chaos', 'worker.ts'), db, log, '3', mode],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CHAOS_LOG: log, BATON_LOG_LEVEL: 'warn' } },
  );
  const worker: Worker = { child, mode, stderr: '' };
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.stderr?.on('data', (d) => {
    worker.stderr += String(d);
  });
  // The worker's warnings (pino, JSON lines): where a write the full disk refused is reported.
  child.stdout?.on('data', (d) => {
    if (mode === 'full') fullDiskLog.push(String(d));
  });
  return worker;
}

const isReady = (w: Worker) => readFileSync(log, 'utf8').includes(`ready ${w.child.pid}\n`);

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => {
      appendFileSync(log, `killed ${child.pid}\n`);
      resolve();
    });
    child.kill('SIGKILL');
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const flowId = (i: number) => `chaos-${String(i).padStart(2, '0')}`;

async function allEnded(store: SqliteStore): Promise<boolean> {
  for (let i = 0; i < FLOWS; i++) {
    const run = await store.getRun(flowId(i));
    if (!run || !['succeeded', 'partial', 'failed', 'cancelled', 'expired'].includes(run.status))
      return false;
  }
  return true;
}

/** Flips `count` bytes of a copy of the file, at the given offsets. */
function corruptCopy(name: string, offsets: number[]): string {
  const copy = join(dir, name);
  copyFileSync(db, copy);
  const fd = openSync(copy, 'r+');
  try {
    const byte = Buffer.alloc(1);
    for (const at of offsets) {
      readSync(fd, byte, 0, 1, at);
      byte[0] = (byte[0] as number) ^ 0xff;
      writeSync(fd, byte, 0, 1, at);
    }
  } finally {
    closeSync(fd);
  }
  return copy;
}

describe('chaos with real processes', () => {
  it('SIGKILLs, a full disk and corrupted copies leave a sound file where every flow ran once', async () => {
    writeFileSync(log, '');
    const store = openSqliteStore(db);
    const starter = createBaton({ store, worker: false, tasks: [chaosStep] });
    for (let i = 0; i < FLOWS; i++) await starter.start(chaosFlow, {}, { id: flowId(i) });
    await starter.close();

    const workers = [startWorker('normal'), startWorker('normal'), startWorker('full')];
    let kills = 0;
    let fullKills = 0;
    let fullExits = 0;
    const deadline = Date.now() + 180_000;
    while (!(await allEnded(store))) {
      if (Date.now() > deadline)
        throw new Error(`not finished in time: ${JSON.stringify(await store.countRuns())}`);
      for (const [i, w] of workers.entries()) {
        if (w.child.exitCode === null || w.child.signalCode !== null) continue;
        // A worker that cannot write at all (the full disk met its start-up writes) may stop, but
        // only saying why; any other worker stopping by itself is a crash.
        if (w.mode !== 'full' || !/SQLITE_FULL|disk is full/.test(w.stderr))
          throw new Error(`a ${w.mode} worker exited by itself (${w.child.exitCode}): ${w.stderr}`);
        fullExits++;
        workers[i] = startWorker('full');
      }
      // Fault injection at a random moment while work goes on (not a wait for behaviour).
      await pause(200 + Math.floor(Math.random() * 600));
      if (kills >= KILLS) continue;
      const ready = workers.filter(isReady);
      const victim = ready[Math.floor(Math.random() * ready.length)];
      if (!victim) continue;
      await killHard(victim.child);
      kills++;
      if (victim.mode === 'full') fullKills++;
      workers[workers.indexOf(victim)] = startWorker(victim.mode);
    }
    const flows = await Promise.all(Array.from({ length: FLOWS }, (_, i) => store.getRun(flowId(i))));
    const stepRuns = await Promise.all(
      flows.flatMap((f) => FLOW_STEPS.map((s) => store.getRun(`${f?.id}.${s}`))),
    );
    const memo = await Promise.all(stepRuns.map((r) => store.getSteps(r?.id ?? '')));
    const failures: string[] = [];
    for (let after = 0; ; ) {
      const batch = await store.readEvents({ afterId: after, limit: 10_000 });
      if (batch.length === 0) break;
      after = batch.at(-1)?.id ?? after;
      for (const e of batch)
        if (e.type === 'attempt:failed' || e.type === 'run:failed') failures.push(JSON.stringify(e.data));
    }
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(
      workers.map((w) => (w.child.exitCode === null ? new Promise((r) => w.child.once('exit', r)) : null)),
    );
    await store.close();

    // Every flow and every step ended succeeded, with the outputs the steps computed.
    expect(flows.map((f) => `${f?.id} ${f?.status}`)).toEqual(
      Array.from({ length: FLOWS }, (_, i) => `${flowId(i)} succeeded`),
    );
    for (const r of stepRuns) {
      expect(r?.status, r?.id).toBe('succeeded');
      expect(r?.output).toEqual({ part: r?.stepId, sum: (STEPS_PER_TASK * (STEPS_PER_TASK - 1)) / 2 });
    }
    // Exactly one record per memoized step: no lost and no duplicated step outputs.
    memo.forEach((records, i) => {
      const keys = records
        .map((s) => s.key)
        .filter((k) => /^k\d$/.test(k))
        .sort();
      expect(keys, stepRuns[i]?.id).toEqual(Array.from({ length: STEPS_PER_TASK }, (_, k) => `k${k}`));
    });
    // No step body ran again after its record committed.
    const committed = new Set<string>();
    const problems: string[] = [];
    for (const [kind, run, key] of readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))) {
      if (kind === 'exec' && committed.has(`${run} ${key}`))
        problems.push(`${run} ${key} ran after it committed`);
      if (kind === 'committed') committed.add(`${run} ${key}`);
    }
    expect(problems).toEqual([]);
    expect(kills).toBeGreaterThanOrEqual(3);
    // The full disk was met, every failure it caused names it, and the work was retried (all
    // succeeded above). A write it refused is reported by the worker: the store kept nothing of it.
    const fullFailures = failures.filter((f) => /SQLITE_FULL|STORE_UNAVAILABLE/.test(f));
    for (const f of fullFailures) expect(f).toMatch(/disk is full/);
    const reported = fullDiskLog
      .join('')
      .split('\n')
      .filter((l) => /STORE_UNAVAILABLE|SQLITE_FULL/.test(l));
    for (const l of reported) expect(l).toMatch(/database or disk is full/);
    expect(fullFailures.length + reported.length + fullExits, 'the full disk was never met').toBeGreaterThan(
      0,
    );
    console.log(
      `chaos: ${kills} SIGKILLs (${fullKills} of the full-disk worker), ${fullExits} full-disk start-up exits, ${reported.length} refused writes reported, ${fullFailures.length} attempt failures naming the full disk`,
    );

    const raw = new (sqliteDriver().Database)(db);
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.pragma('wal_checkpoint(TRUNCATE)');
    const pageSize = raw.pragma('page_size', { simple: true }) as number;
    const pages = raw.pragma('page_count', { simple: true }) as number;
    raw.close();

    // A copy with a broken header or a broken schema page is refused at open with STORE_CORRUPT.
    for (const [name, offsets] of [
      ['header.db', [0, 5, 9]],
      ['schema-page.db', [100, 101, 103, 105, 107]],
    ] as const) {
      const err = (() => {
        try {
          openSqliteStore(corruptCopy(name, [...offsets])).close();
        } catch (e) {
          return e;
        }
      })();
      expect(isBatonError(err) && err.code, name).toBe('STORE_CORRUPT');
    }
    // Bytes flipped anywhere else: the open or any later read says STORE_CORRUPT, or reads fine.
    for (let n = 0; n < 8; n++) {
      const page = 1 + Math.floor(Math.random() * (pages - 1));
      const offsets = Array.from(
        { length: 16 },
        () => page * pageSize + Math.floor(Math.random() * pageSize),
      );
      let err: unknown;
      try {
        const copy = openSqliteStore(corruptCopy(`random-${n}.db`, offsets));
        try {
          for (let i = 0; i < FLOWS; i++) {
            await copy.getRun(flowId(i));
          }
          await copy.listRuns({ limit: 1_000 });
          await copy.readEvents({ afterId: 0, limit: 100_000 });
        } finally {
          await copy.close();
        }
      } catch (e) {
        err = e;
      }
      if (err !== undefined)
        expect(isBatonError(err) && err.code, `page ${page}: ${String(err)}`).toBe('STORE_CORRUPT');
    }
  }, 300_000);
});
