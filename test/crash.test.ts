/**
 * Crash test with real processes: two workers share one SQLite file and work through 200 runs
 * that checkpoint; one of them is SIGKILLed at random moments and restarted, again and again.
 * Afterwards the log the workers kept and the store must show that every run finished, no
 * committed checkpoint was lost, no memoized step ran again after its record committed, and no
 * run was ever executed by two workers at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const RUNS = 200;
const KILLS = 6;
const dir = mkdtempSync(join(tmpdir(), 'baton-crash-'));
const db = join(dir, 'crash.db');
const log = join(dir, 'events.log');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startWorker(concurrency: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(import.meta.dirname, 'crash', 'worker.ts'), db, log, String(concurrency)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (readFileSync(log, 'utf8').includes(`ready ${child.pid}\n`)) return resolve(child);
      if (child.exitCode !== null) return reject(new Error(`worker exited early: ${stderr}`));
      if (Date.now() - started > 30_000) return reject(new Error(`worker did not start: ${stderr}`));
      setTimeout(check, 20);
    };
    check();
  });
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => {
      // Written after the process is gone: every line it wrote comes before this one.
      appendFileSync(log, `killed ${child.pid}\n`);
      resolve();
    });
    child.kill('SIGKILL');
  });
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash recovery with real processes', () => {
  it('finishes 200 checkpointing runs while one of two workers is SIGKILLed over and over', async () => {
    writeFileSync(log, '');
    const setup = openSqliteStore(db);
    await setup.createRuns(
      Array.from({ length: RUNS }, (_, i) => ({
        id: `crash-${String(i).padStart(3, '0')}`,
        kind: 'task' as const,
        name: 'crash-work',
        input: { i },
        status: 'queued' as const,
      })),
      [],
    );
    // The steady worker is narrow, so most runs are in the victim's hands when it is killed.
    const steady = await startWorker(2);
    let victim = await startWorker(8);
    let kills = 0;
    const deadline = Date.now() + 150_000;
    for (;;) {
      const counts = await setup.countRuns();
      if ((counts.succeeded ?? 0) === RUNS) break;
      if (Date.now() > deadline) throw new Error(`not finished in time: ${JSON.stringify(counts)}`);
      if (kills < KILLS) {
        // A random moment while work is going on: this is fault injection, not waiting for behaviour.
        await pause(200 + Math.floor(Math.random() * 400));
        await killHard(victim);
        kills++;
        victim = await startWorker(8);
      } else await pause(100);
    }
    expect(kills).toBeGreaterThanOrEqual(5);

    const recovered: Array<{ data: unknown }> = [];
    for (let after = 0; ; ) {
      const batch = await setup.readEvents({ afterId: after, limit: 10_000 });
      if (batch.length === 0) break;
      after = batch.at(-1)?.id ?? after;
      recovered.push(...batch.filter((e) => e.type === 'lease:recovered'));
    }
    const checkpoints = new Map<string, number[]>();
    for (let i = 0; i < RUNS; i++) {
      const id = `crash-${String(i).padStart(3, '0')}`;
      checkpoints.set(
        id,
        (await setup.listCheckpoints(id)).map((c) => c.seq),
      );
    }
    steady.kill('SIGTERM');
    victim.kill('SIGTERM');
    await setup.close();

    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const killedPids = new Set(lines.filter((l) => l[0] === 'killed').map((l) => l[1]));
    expect(killedPids.size).toBe(kills);
    // The kills hit real work: at least five killed workers had runs taken back and resumed.
    const robbed = new Set(recovered.map((e) => (e.data as { previousOwner: string }).previousOwner));
    expect(robbed.size).toBeGreaterThanOrEqual(5);
    expect(lines.some((l) => l[0] === 'begin' && Number(l[4]) > 0)).toBe(true);

    const committedAt = new Map<string, number>();
    const lastCheckpointed = new Map<string, number>();
    const open = new Map<string, { pid: string; at: number }[]>();
    const problems: string[] = [];
    lines.forEach((l, at) => {
      const [kind, run, a, b, c] = l;
      switch (kind) {
        case 'exec':
          if (committedAt.has(`${run} ${a}`))
            problems.push(`step ${a} of ${run} ran again at line ${at} after it committed`);
          break;
        case 'committed':
          if (!committedAt.has(`${run} ${a}`)) committedAt.set(`${run} ${a}`, at);
          break;
        case 'ckpt': {
          if (!checkpoints.get(run as string)?.includes(Number(a)))
            problems.push(`checkpoint ${a} of ${run} committed (line ${at}) but is not in the store`);
          lastCheckpointed.set(run as string, Math.max(lastCheckpointed.get(run as string) ?? 0, Number(b)));
          break;
        }
        case 'begin': {
          const from = Number(c);
          if (from < (lastCheckpointed.get(run as string) ?? 0))
            problems.push(
              `${run} resumed from item ${from} at line ${at}, but a checkpoint at ${lastCheckpointed.get(run as string)} had committed`,
            );
          const holders = (open.get(run as string) ?? []).filter((h) => h.pid !== a);
          if (holders.length > 0)
            problems.push(
              `${run} began on ${a} at line ${at} while ${holders.map((h) => h.pid).join(',')} still ran it`,
            );
          open.set(run as string, [...(open.get(run as string) ?? []), { pid: a as string, at }]);
          break;
        }
        case 'end':
          open.set(
            run as string,
            (open.get(run as string) ?? []).filter((h) => h.pid !== a),
          );
          break;
        case 'killed':
          for (const [r, hs] of open)
            open.set(
              r,
              hs.filter((h) => h.pid !== run),
            );
          break;
      }
    });
    expect(problems).toEqual([]);
    for (let i = 0; i < RUNS; i++) {
      for (let s = 0; s < 12; s++)
        expect(committedAt.has(`crash-${String(i).padStart(3, '0')} s${s}`), `crash-${i} s${s}`).toBe(true);
    }
  }, 240_000);
});
