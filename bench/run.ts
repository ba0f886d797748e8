/**
 * `npm run bench [-- name…]`: runs every `bench/*.ts` module (except this one and `_` helpers) one
 * after the other, or only those whose file name contains one of the arguments. Prints the machine
 * first (the machine is shared and noisy), then one table: each metric, its target if it has one,
 * its ratio to a floor measured in the same run, and PASS/MISS. A MISS is information, not a
 * failure — benchmarks are not tests; a module that throws is, and makes the exit code 1.
 * Every metric of the run is written to bench/results/latest.json.
 *
 * A module: `export default async function bench(): Promise<Array<{ metric, value, unit }>>`, and
 * optionally `export const peers: string[]`, notes about other systems printed under the table, and
 * `export const headline = true`: its figures are measured again with one core busy (a spinning
 * process pinned to the other core, bench/_busy.ts) and printed in a second column, where the same
 * targets apply (issue 18 item 5). `npm run bench -- --quiet` skips that pass. Figures of
 * bench/peers.ts are set beside the best peer's in a table of their own (bench/_peer-table.ts).
 * Run through bench/_register.mjs (`npm run bench` does): Baton's TypeScript is compiled as the
 * published package is, not through tsx, whose keepNames wrapping costs Baton CPU and heap that
 * users do not pay (bench/_loader.mjs).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { canPinCores, withBusyCore } from './_busy.ts';
import { formatPeerTable, peerRows } from './_peer-table.ts';
import type { BenchMetric } from './_stats.ts';
import { formatTable, type Row } from './_table.ts';

type Comparison = '<' | '<=' | '>=';

/** A target is a fixed number, or a multiple of a floor metric measured in the same run. */
type Target = { op: Comparison; value: number } | { op: Comparison; factor: number; of: string };

/** The targets of the project, in one place. Metrics that a run does not produce are simply absent. */
const TARGETS: Readonly<Record<string, Target>> = {
  'step.durable_overhead_ms': { op: '<=', factor: 2, of: 'sqlite.commit_floor_ms' },
  'runs.throughput_c50_per_s': { op: '>=', value: 5_000 },
  'budget.assess_ns': { op: '<', value: 2_000 },
  'timeout.detect_lateness_p99_ms': { op: '<=', value: 10 },
  'http.resume_p99_ms': { op: '<=', value: 10 },
  'delivery.lateness_p99_ms': { op: '<=', value: 20 },
  'langgraph.baton_step_ms': { op: '<=', value: 0.3 },
  // LangGraph's own checkpointing (MemorySaver) costs more than 0.3 ms a step by itself: what Baton's
  // storage adds beyond it is the part the target can honestly be held against.
  'langgraph.baton_over_memory_step_ms': { op: '<=', value: 0.3 },
  // Issue 16: the dashboard loads in under a second with 10,000 runs and a 2,000-event run.
  'dashboard.overview_ms': { op: '<', value: 1_000 },
  'dashboard.runs_ms': { op: '<', value: 1_000 },
  'dashboard.run_ms': { op: '<', value: 1_000 },
  'dashboard.run_phone_ms': { op: '<', value: 1_000 },
  'dashboard.deliveries_ms': { op: '<', value: 1_000 },
  // Issue 11 item 3: retention keeps the file bounded and gc is fast.
  'retention.gc_runs_per_s': { op: '>=', value: 10_000 },
  'retention.growth_h3_to_h8': { op: '<=', value: 1.1 },
  'retention.sweep_p99_ms': { op: '<=', value: 10 },
  // A sweep never holds the event loop longer than the write slice: it runs on its own thread (none
  // of the loop's transactions is a sweep), and the writes wait for it no longer than the slice.
  'retention.sweep_loop_block_p99_ms': { op: '<=', factor: 1, of: 'retention.write_slice_ms' },
  'retention.sweep_loop_transactions': { op: '<=', value: 0 },
  'retention.sweep_writes_held_p99_ms': { op: '<=', factor: 1, of: 'retention.write_slice_ms' },
  // Issue 18 item 1: exact token counting near the floor, and the protocol 002 §7.2 plan.
  'tokens.mb_per_s': { op: '>=', value: 10 },
  'context.plan_protocol_example_ms': { op: '<=', value: 50 },
  // Issue 15 item 4: `import 'baton'` in a fresh process (built package).
  'import.root_ms': { op: '<=', value: 100 },
  // Issue 13: enqueue → start across processes on Postgres.
  'pg_enqueue_start.baton_p50_ms': { op: '<=', value: 3 },
  'pg_enqueue_start.baton_p99_ms': { op: '<=', value: 15 },
  'parse_time.warm_per_s': { op: '>=', factor: 0.1, of: 'parse_time.floor_warm_per_s' },
  // The first lunar date loads lunar-javascript (~150 ms idle) inside the cold pass.
  'parse_time.cold_per_s': { op: '>=', factor: 0.05, of: 'parse_time.floor_cold_per_s' },
  // Issue 18: a restarted worker takes a killed worker's run back; 100,000 waiting runs in one process.
  'peers.recovery_ms.baton': { op: '<=', value: 250 },
  'waiting.heap_bytes_per_run': { op: '<=', value: 1_024 },
  'waiting.recovery_ms': { op: '<=', value: 1_000 },
  'waiting.startup_ms': { op: '<=', value: 1_000 },
  'waiting.due_lateness_p99_ms': { op: '<=', value: 20 },
};

/**
 * Floors that do not follow the naming convention. By convention a metric with a `floor` word in its
 * name is the floor of the metric without it (budget.assess_floor_ns → budget.assess_ns,
 * tokens.floor_mb_per_s → tokens.mb_per_s), so most modules need no entry here.
 */
const FLOORS: Readonly<Record<string, string>> = {
  'step.durable_overhead_ms': 'sqlite.commit_floor_ms',
  'checkpoint.overhead_ms': 'sqlite.commit_floor_ms',
  'timeout.detect_lateness_p99_ms': 'timeout.floor_lateness_p99_ms',
};

const BENCH_DIR = import.meta.dirname;
const RESULTS = join(BENCH_DIR, 'results', 'latest.json');

function machineInfo(): string[] {
  const cpu = cpus();
  const [l1, l5, l15] = loadavg().map((l) => l.toFixed(2));
  return [
    `node ${process.version} on ${process.platform}/${process.arch}`,
    `cpu: ${cpu[0]?.model ?? 'unknown'} × ${cpu.length}, memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `load average: ${l1} ${l5} ${l15} (1, 5, 15 min)`,
  ];
}

function benchFiles(filters: readonly string[]): string[] {
  const all = readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_') && !f.endsWith('.d.ts'))
    .sort();
  if (filters.length === 0) return all;
  return all.filter((f) => filters.some((arg) => f.slice(0, -3).includes(arg)));
}

function isMetric(m: unknown): m is BenchMetric {
  const x = m as BenchMetric;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.metric === 'string' &&
    typeof x.unit === 'string' &&
    typeof x.value === 'number' &&
    Number.isFinite(x.value)
  );
}

interface ModuleResult {
  metrics: BenchMetric[];
  peers: string[];
  headline: boolean;
}

async function runModule(file: string): Promise<ModuleResult> {
  const mod = (await import(pathToFileURL(join(BENCH_DIR, file)).href)) as {
    default?: unknown;
    peers?: unknown;
    headline?: unknown;
  };
  if (typeof mod.default !== 'function')
    throw new Error(`${file} has no default export \`async function bench()\``);
  const metrics: unknown = await (mod.default as () => unknown)();
  if (!Array.isArray(metrics)) throw new Error(`${file}'s bench() returned ${typeof metrics}, not an array`);
  const bad = metrics.find((m) => !isMetric(m));
  if (bad !== undefined)
    throw new Error(
      `${file}'s bench() returned a bad metric (${String((bad as BenchMetric)?.metric)} = ${String((bad as BenchMetric)?.value)}); expected { metric: string, value: finite number, unit: string }`,
    );
  const peers = Array.isArray(mod.peers) ? mod.peers.filter((p): p is string => typeof p === 'string') : [];
  return { metrics: metrics as BenchMetric[], peers, headline: mod.headline === true };
}

function floorOf(metric: string, values: ReadonlyMap<string, number>): string | undefined {
  const explicit = FLOORS[metric];
  if (explicit !== undefined) return values.has(explicit) ? explicit : undefined;
  for (const name of values.keys()) if (name !== metric && withoutFloor(name) === metric) return name;
  return undefined;
}

/** `budget.assess_floor_ns` → `budget.assess_ns`, `tokens.floor_mb_per_s` → `tokens.mb_per_s`. */
function withoutFloor(name: string): string | undefined {
  const stripped = name.replace(/([._])floor_/, '$1').replace(/_floor$/, '');
  return stripped === name ? undefined : stripped;
}

function compare(value: number, op: Comparison, bound: number): boolean {
  return op === '<' ? value < bound : op === '<=' ? value <= bound : value >= bound;
}

function fmt(n: number): string {
  if (Number.isInteger(n) || Math.abs(n) >= 1_000) return Math.round(n).toLocaleString('en-US');
  return Math.abs(n) >= 100 ? n.toFixed(1) : Number(n.toPrecision(4)).toString();
}

function status(metric: string, value: number, values: ReadonlyMap<string, number>): string {
  const target = TARGETS[metric];
  if (!target) return '';
  const bound = 'value' in target ? target.value : values.get(target.of);
  if (bound === undefined) return 'n/a (no floor)';
  return compare(value, target.op, 'value' in target ? bound : target.factor * bound) ? 'PASS' : 'MISS';
}

function toRow(
  m: BenchMetric,
  values: ReadonlyMap<string, number>,
  busy: ReadonlyMap<string, number> | undefined,
): Row {
  const floor = floorOf(m.metric, values);
  const floorValue = floor === undefined ? undefined : values.get(floor);
  const ratio = floorValue ? `${fmt(m.value / floorValue)}x` : '';
  const busyValue = busy?.get(m.metric);
  const busyCells =
    busy === undefined
      ? []
      : busyValue === undefined
        ? ['', '']
        : [fmt(busyValue), status(m.metric, busyValue, busy)];
  const target = TARGETS[m.metric];
  let targetText = '';
  if (target && 'value' in target) targetText = `${target.op} ${fmt(target.value)}`;
  else if (target) {
    const of = values.get(target.of);
    targetText = `${target.op} ${target.factor}× ${target.of}${of === undefined ? '' : ` = ${fmt(target.factor * of)}`}`;
  }
  return [m.metric, fmt(m.value), m.unit, targetText, ratio, status(m.metric, m.value, values), ...busyCells];
}

interface Pass {
  metrics: BenchMetric[];
  notes: string[];
  failed: string[];
  headline: Set<string>;
}

async function runFiles(files: readonly string[], label: string): Promise<Pass> {
  const pass: Pass = { metrics: [], notes: [], failed: [], headline: new Set() };
  for (const file of files) {
    const t0 = performance.now();
    const took = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    try {
      const { metrics, peers, headline } = await runModule(file);
      pass.metrics.push(...metrics);
      pass.notes.push(...peers);
      if (headline) pass.headline.add(file);
      console.log(`${file} (${label}): ${metrics.length} metrics in ${took()}`);
    } catch (err) {
      pass.failed.push(file);
      console.error(`${file} (${label}) FAILED after ${took()}:`, err);
    }
  }
  return pass;
}

function valuesOf(metrics: readonly BenchMetric[]): Map<string, number> {
  const values = new Map<string, number>();
  for (const m of metrics) {
    if (values.has(m.metric))
      console.error(`warning: metric ${m.metric} is reported twice; the table shows both`);
    values.set(m.metric, m.value);
  }
  return values;
}

async function main(): Promise<number> {
  for (const line of machineInfo()) console.log(line);
  const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const files = benchFiles(filters);
  if (files.length === 0) {
    console.error(`no bench module matches ${filters.join(', ')} (looked in ${BENCH_DIR})`);
    return 1;
  }
  const quiet = await runFiles(files, 'quiet');
  const headline = files.filter((f) => quiet.headline.has(f));
  let busy: Pass | undefined;
  if (process.argv.includes('--quiet') || headline.length === 0) {
    // Nothing to re-measure, or asked not to.
  } else if (!canPinCores()) console.log('\none core busy: skipped (needs 2 cores and taskset)');
  else {
    console.log(`\none core busy (a spinning process pinned to the last core): ${headline.join(', ')}`);
    busy = await withBusyCore(() => runFiles(headline, 'busy'));
  }
  const all = quiet.metrics;
  const values = valuesOf(all);
  const busyValues = busy === undefined ? undefined : valuesOf(busy.metrics);
  const header = ['metric', 'value', 'unit', 'target', 'vs floor', 'status'];
  console.log();
  console.log(
    formatTable(
      busyValues ? [...header, 'one core busy', 'status'] : header,
      all.map((m) => toRow(m, values, busyValues)),
    ),
  );
  const peerQuiet = peerRows(values);
  if (peerQuiet.length > 0) {
    console.log('\nBaton beside the best peer, same machine, same run (target: ahead of every peer):');
    console.log(formatPeerTable(peerQuiet, busyValues ? peerRows(busyValues) : []));
  }
  if (quiet.notes.length > 0) {
    console.log('\npeers (measured by others on this machine, for scale):');
    for (const n of quiet.notes) console.log(`  ${n}`);
  }
  const failed = [...quiet.failed, ...(busy?.failed.map((f) => `${f} (one core busy)`) ?? [])];
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      all.map(({ metric, value, unit }) => ({ metric, value, unit, busy: busyValues?.get(metric) })),
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${all.length} metrics to ${RESULTS}`);
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (failed.length > 0) console.error(`failed: ${failed.join(', ')}`);
  return failed.length > 0 ? 1 : 0;
}

// A stray rejection inside a module must be reported, not crash the run with no table.
let strayRejections = 0;
process.on('unhandledRejection', (reason) => {
  strayRejections++;
  console.error('unhandled rejection in a bench module:', reason);
});

const code = await main();
// Exit explicitly: a module that leaves a timer or a handle behind must not keep the harness alive.
process.exit(strayRejections > 0 ? 1 : code);
