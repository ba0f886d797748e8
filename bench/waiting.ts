/**
 * A hundred thousand waiting runs in one process on SQLite (issue 18 item 2). Agent workloads are
 * mostly waiting; what that costs the process that holds them:
 *
 * - waiting.heap_bytes_per_run: V8 heap growth (after full GCs) in the process that started and
 *   suspended 100,000 runs — 40 % asleep in `ctx.sleep('1h')`, 30 % waiting for a decision
 *   (`ctx.waitFor`), 30 % held results of scheduled tool calls due in an hour — over a baseline
 *   taken after 1,000 warm-up runs. Target ≤ 1 KB. waiting.heap_bytes_per_run_restarted: the same
 *   in a Baton opened afresh on that file (heap after `ready()` − heap before the open).
 * - waiting.startup_ms: a clean restart on the file: `openSqliteStore` + `createBaton` + `ready()`.
 *   waiting.recovery_ms: the same on a copy of the files taken while the first Baton was still
 *   open (what a crash leaves: the WAL not folded in). Medians of 3. Targets ≤ 1 s.
 * - waiting.due_lateness_p50_ms / _p99_ms: in the restarted Baton (worker concurrency 50), 1,000
 *   more runs sleep until one common instant while the 100,000 wait; lateness = when each body
 *   resumes − that instant. Target p99 ≤ 20 ms. waiting.due_drain_ms: the last one.
 * - waiting.build_runs_per_s: how fast the population was started and suspended (for scale).
 *
 * The population is built once per process; the "one core busy" pass measures on a copy of it.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settledHeap } from './_delivery-runs.ts';
import { type DueAtOnce, dueSamples, withAdaptiveLead } from './_peer-due.ts';
import { type BenchMetric, median, round, withTempDir } from './_stats.ts';
import { dueLate, type Mix, openWaiting, populate, untilWaiting, waker } from './_waiting-runs.ts';

export const headline = true;

/** BENCH_WAITING_RUNS=10000 for a quicker look; the figure is 100,000. */
const TOTAL = Number(process.env.BENCH_WAITING_RUNS ?? 100_000);
const WARMUP: Mix = { sleepers: 400, approvers: 300, deliveries: 300 };
const MIX: Mix = {
  sleepers: Math.round(TOTAL * 0.4) - 400,
  approvers: Math.round(TOTAL * 0.3) - 300,
  deliveries: TOTAL - Math.round(TOTAL * 0.4) - Math.round(TOTAL * 0.3) - 300,
};
const CONCURRENCY = 50;
const DUE = 1_000;
const RESTARTS = 3;

interface Population {
  dir: string;
  file: string;
  crash: string;
  heapPerRun: number;
  buildPerSecond: number;
}

let built: Population | undefined;

/**
 * Copies the database (and its WAL) and syncs the copies. Unsynced, the copy's ~40 MB sit dirty in
 * the page cache and the restarted store's first COMMIT waited on their writeback (20-100 ms at
 * 20,000-100,000 runs, growing with the file): a cost of the copy, not of a restart, whose file
 * the previous process's checkpoints had synced.
 */
function copyDb(from: string, to: string): void {
  for (const suffix of ['', '-wal']) {
    if (!existsSync(from + suffix)) continue;
    copyFileSync(from + suffix, to + suffix);
    const fd = openSync(to + suffix, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

async function build(): Promise<Population> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-waiting-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'waiting.db');
  const crash = join(dir, 'crash.db');
  const { store, baton } = openWaiting(file, CONCURRENCY);
  try {
    await baton.ready();
    await populate(baton, store, WARMUP);
    const before = settledHeap();
    const t0 = performance.now();
    await populate(baton, store, MIX);
    const ms = performance.now() - t0;
    const after = settledHeap();
    const n = MIX.sleepers + MIX.approvers + MIX.deliveries;
    // The files as a crash would leave them: the Baton is still open, its WAL not checkpointed.
    copyDb(file, crash);
    return { dir, file, crash, heapPerRun: (after - before) / n, buildPerSecond: n / (ms / 1000) };
  } finally {
    await baton.close();
    await store.close();
  }
}

/** Opens the file and times open + createBaton + ready(); the caller closes what it returns. */
async function restart(file: string) {
  const heapBefore = settledHeap();
  const t0 = performance.now();
  const opened = openWaiting(file, CONCURRENCY);
  await opened.baton.ready();
  const ms = performance.now() - t0;
  return { ...opened, ms, heapPerRun: (settledHeap() - heapBefore) / TOTAL };
}

async function dueAtOnce(file: string, leadMs: number): Promise<DueAtOnce & { drain: number }> {
  const { store, baton } = openWaiting(file, CONCURRENCY);
  try {
    await baton.ready();
    dueLate.length = 0;
    const due = Date.now() + leadMs;
    await Promise.all(Array.from({ length: DUE }, () => baton.start(waker, { due })));
    await untilWaiting(store, TOTAL + DUE, due);
    const margin = due - Date.now();
    while (dueLate.length < DUE) {
      await new Promise((r) => setTimeout(r, 50));
      if (Date.now() - due > 120_000) throw new Error(`bench: only ${dueLate.length}/${DUE} woke in 2 min`);
    }
    return { ...dueSamples(dueLate, margin), drain: Math.max(...dueLate) };
  } finally {
    await baton.close();
    await store.close();
  }
}

export default async function bench(): Promise<BenchMetric[]> {
  built ??= await build();
  const pop = built;
  return withTempDir('waiting', async (dir) => {
    const startup: number[] = [];
    const recovery: number[] = [];
    let heapRestarted = 0;
    for (let r = 0; r < RESTARTS; r++) {
      const clean = join(dir, `clean-${r}.db`);
      copyDb(pop.file, clean);
      const s = await restart(clean);
      startup.push(s.ms);
      heapRestarted = s.heapPerRun;
      await s.baton.close();
      await s.store.close();
      const crashed = join(dir, `crash-${r}.db`);
      copyDb(pop.crash, crashed);
      const c = await restart(crashed);
      recovery.push(c.ms);
      await c.baton.close();
      await c.store.close();
    }
    // Starting and suspending the 1,000 must end before they are due: twice their build time, + 2 s.
    const lead = Math.round((2 * DUE * 1000) / pop.buildPerSecond) + 2_000;
    // With one core busy, starting the 1,000 can take longer than the build rate says: then again
    // on a fresh copy with a longer lead.
    const late = await withAdaptiveLead(lead, (l) => {
      const dueFile = join(dir, `due-${l}.db`);
      copyDb(pop.file, dueFile);
      return dueAtOnce(dueFile, l);
    });
    return [
      { metric: 'waiting.heap_bytes_per_run', value: Math.round(pop.heapPerRun), unit: 'B' },
      { metric: 'waiting.heap_bytes_per_run_restarted', value: Math.round(heapRestarted), unit: 'B' },
      { metric: 'waiting.startup_ms', value: round(median(startup)), unit: 'ms' },
      { metric: 'waiting.recovery_ms', value: round(median(recovery)), unit: 'ms' },
      { metric: 'waiting.due_lateness_p50_ms', value: round(late.p50), unit: 'ms' },
      { metric: 'waiting.due_lateness_p99_ms', value: round(late.p99), unit: 'ms' },
      { metric: 'waiting.due_drain_ms', value: round(late.drain), unit: 'ms' },
      { metric: 'waiting.build_runs_per_s', value: Math.round(pop.buildPerSecond), unit: 'runs/s' },
    ];
  });
}
