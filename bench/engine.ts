/**
 * The engine on real SQLite files (WAL, synchronous=FULL: Baton's defaults), in this process:
 *
 * - sqlite.commit_floor_ms: a raw better-sqlite3 single-row INSERT commit with Baton's pragmas, the
 *   floor every durable write stands on. Median over 2,000 commits after 200 warm-up commits, taken
 *   in slices of 400 just before each durable step run.
 * - step.durable_overhead_ms: per `ctx.step` of a 1,000-step task at concurrency 1, the body's time
 *   minus the time of the same loop calling the functions directly, / 1,000. Median of 5 runs.
 *   step.overhead_vs_floor is that over the commit floor (target ≤ 2×); step.direct_loop_ms is the
 *   subtracted baseline (the whole 1,000-call loop, not per call).
 * - checkpoint.overhead_ms: per `ctx.checkpoint` of a 1 KB state, 1,000 checkpoints in one task.
 * - runs.throughput_c1_per_s / runs.throughput_c50_per_s: 10,000 trivial runs end to end, from the
 *   first `baton.start` until one `store.onEvents` listener has counted 10,000 `run:succeeded`.
 *   runs.commits_per_run_c1 / _c50 (store.commitStats before and after) show whether group commit
 *   pays: at concurrency 1 every write is its own commit, at 50 they should share.
 *
 * For scale, measured by others on this machine: DBOS 2.4–2.9 ms per durable step (Postgres),
 * LangGraph with its SQLite checkpointer 1.4–3.1 ms per step; BullMQ ≈3,000 jobs/s, pg-boss and
 * graphile-worker ≈2,000 jobs/s, DBOS ≈400 workflows/s. The harness prints `peers` under the table.
 */
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { createBaton, defineTask, type TaskContext } from '../src/index.ts';
import { openSqliteStore, type SqliteDatabase, sqliteDriver } from '../src/store/index.ts';
import { type BenchMetric, median, round, withTempDir } from './_stats.ts';
import { measureThroughput } from './_throughput.ts';

const { Database } = sqliteDriver();

export const peers = [
  'durable step: DBOS 2.4–2.9 ms (Postgres), LangGraph + SQLite checkpointer 1.4–3.1 ms',
  'throughput: BullMQ ≈3,000 jobs/s, pg-boss ≈2,000, graphile-worker ≈2,000, DBOS ≈400 workflows/s',
];

const FLOOR_WARMUP = 200;
const FLOOR_COMMITS = 2_000;
const STEPS = 1_000;
const STEP_RUNS = 5;
const CHECKPOINTS = 1_000;
const CHECKPOINT_RUNS = 3;
const THROUGHPUT_RUNS = 10_000;

/**
 * Raw better-sqlite3 commits with Baton's pragmas. Sampled in slices between the engine runs, so the
 * floor and the engine see the same disk and the same neighbours (this machine is shared).
 */
class CommitFloor {
  private readonly db: SqliteDatabase;
  private readonly insert: BetterSqlite3.Statement;
  private n = 0;
  readonly samples: number[] = [];

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec('CREATE TABLE floor (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    this.insert = this.db.prepare('INSERT INTO floor (v) VALUES (?)');
    this.sample(FLOOR_WARMUP, false);
  }

  /** `count` single-row INSERTs in autocommit: one transaction and one WAL fsync each. */
  sample(count: number, keep = true): void {
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      this.insert.run(`row ${this.n++}`);
      const dt = performance.now() - t0;
      if (keep) this.samples.push(dt);
    }
  }

  close(): void {
    this.db.close();
  }
}

type LoopMode = 'durable' | 'direct' | 'checkpoint';

/** Runs `n` iterations of the given mode inside a task body and returns the body's own time. */
async function loop(mode: LoopMode, n: number, ctx: TaskContext): Promise<number> {
  const fn = (i: number) => i;
  // ~1 KB of JSON once serialized (`{"i":…,"notes":"…"}`).
  const notes = 'n'.repeat(1_000);
  let sum = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    if (mode === 'durable') sum += await ctx.step(`s${i}`, () => fn(i));
    else if (mode === 'direct') sum += await fn(i);
    else sum += await ctx.checkpoint({ i, notes }, { itemsAnalyzed: i + 1, itemsTotal: n });
  }
  const elapsed = performance.now() - t0;
  if (sum <= 0) throw new Error('bench: loop did no work');
  return elapsed;
}

async function perOperation(dir: string, floor: CommitFloor): Promise<BenchMetric[]> {
  const store = openSqliteStore(join(dir, 'steps.db'));
  const baton = createBaton({ store, worker: { concurrency: 1 } });
  const task = defineTask<{ mode: LoopMode; n: number }, number>({
    name: 'bench.loop',
    retry: false,
    run: ({ mode, n }, ctx) => loop(mode, n, ctx),
  });
  const timeOf = async (mode: LoopMode, n: number): Promise<number> => {
    const run = await baton.start(task, { mode, n });
    const outcome = await run.result();
    if (outcome.status !== 'succeeded' || typeof outcome.output !== 'number')
      throw new Error(`bench: ${mode} loop ended ${outcome.status}: ${outcome.error?.message ?? ''}`);
    if (mode === 'durable' && (await store.getSteps(run.id)).length !== n)
      throw new Error('bench: the durable loop did not record every step');
    return outcome.output;
  };
  try {
    // Warm-up: JIT, the statement cache, the WAL file.
    await timeOf('durable', 200);
    await timeOf('direct', 200);
    await timeOf('checkpoint', 100);
    const durable: number[] = [];
    const direct: number[] = [];
    for (let r = 0; r < STEP_RUNS; r++) {
      floor.sample(FLOOR_COMMITS / STEP_RUNS);
      durable.push(await timeOf('durable', STEPS));
      direct.push(await timeOf('direct', STEPS));
    }
    const checkpoints: number[] = [];
    for (let r = 0; r < CHECKPOINT_RUNS; r++) checkpoints.push(await timeOf('checkpoint', CHECKPOINTS));
    const stepMs = (median(durable) - median(direct)) / STEPS;
    return [
      { metric: 'step.durable_overhead_ms', value: round(stepMs), unit: 'ms' },
      { metric: 'step.direct_loop_ms', value: round(median(direct)), unit: 'ms' },
      { metric: 'checkpoint.overhead_ms', value: round(median(checkpoints) / CHECKPOINTS), unit: 'ms' },
    ];
  } finally {
    await baton.close();
    await store.close();
  }
}

/** Measured again with one core busy by the harness (issue 18 item 5: targets hold under load). */
export const headline = true;

export default async function bench(): Promise<BenchMetric[]> {
  return withTempDir('engine', async (dir) => {
    const commits = new CommitFloor(join(dir, 'floor.db'));
    let perOp: BenchMetric[];
    try {
      perOp = await perOperation(dir, commits);
    } finally {
      commits.close();
    }
    const floor = median(commits.samples);
    const step = perOp.find((m) => m.metric === 'step.durable_overhead_ms')!.value;
    // Fresh files for each concurrency: the claim cost depends on how many runs the table holds.
    const c1 = await measureThroughput(join(dir, 'c1.db'), 1, THROUGHPUT_RUNS);
    const c50 = await measureThroughput(join(dir, 'c50.db'), 50, THROUGHPUT_RUNS);
    return [
      { metric: 'sqlite.commit_floor_ms', value: round(floor), unit: 'ms' },
      ...perOp,
      { metric: 'step.overhead_vs_floor', value: round(step / floor, 3), unit: 'x' },
      { metric: 'runs.throughput_c1_per_s', value: Math.round(c1.perSecond), unit: 'runs/s' },
      { metric: 'runs.commits_per_run_c1', value: round(c1.commitsPerRun, 3), unit: 'commits' },
      { metric: 'runs.throughput_c50_per_s', value: Math.round(c50.perSecond), unit: 'runs/s' },
      { metric: 'runs.commits_per_run_c50', value: round(c50.commitsPerRun, 3), unit: 'commits' },
    ];
  });
}
