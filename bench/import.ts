/**
 * What `import 'baton'` costs a fresh process (issue 15 item 4: ≤ 100 ms on this machine; it
 * matters for the serverless adapter, where every cold start pays it). Measured against the built
 * package, not the sources through tsx: the sources are bundled as `npm run build` does
 * (scripts/bundle.ts) into .tmp/bench-import/ (inside the repository, so the build's bare imports
 * resolve to this node_modules) once per bench run.
 *
 * - import.root_ms: wall time of `await import('<dist>/index.js')` inside a fresh `node` process
 *   (performance.now around the import), median of 9 processes.
 * - import.root_cpu_ms: the CPU time (user + system) the same import takes, median of 9: less
 *   sensitive than wall time to the other processes on a shared machine.
 * - import.floor_ms: the same measurement for a module with no imports (what any import costs).
 * - import.bullmq_ms (peer): `await import('bullmq')` measured the same way, when installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle } from '../scripts/bundle.ts';
import { type BenchMetric, median, round } from './_stats.ts';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, '.tmp', 'bench-import');
const PROCESSES = 9;

export const peers = [
  'import.bullmq_ms is BullMQ 6 (a queue library, no durable execution) imported the same way, as a reference for what a Node job library costs at cold start.',
];

/** The package's JavaScript as `npm run build` makes it (scripts/bundle.ts), into .tmp/. */
async function build(): Promise<string> {
  rmSync(OUT, { recursive: true, force: true });
  await bundle(join(OUT, 'dist'));
  return join(OUT, 'dist', 'index.js');
}

/** One fresh process importing `specifier`: [wall ms, cpu ms] of the import alone. */
function importOnce(specifier: string): [number, number] {
  const script = `
    const c0 = process.cpuUsage(); const t0 = performance.now();
    await import(${JSON.stringify(specifier)});
    const wall = performance.now() - t0; const c = process.cpuUsage(c0);
    console.log(JSON.stringify([wall, (c.user + c.system) / 1000]));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`importing ${specifier} failed:\n${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as [number, number];
}

function measure(specifier: string): { wall: number; cpu: number } {
  importOnce(specifier); // warm the file system cache; not counted
  const runs = Array.from({ length: PROCESSES }, () => importOnce(specifier));
  return { wall: median(runs.map((r) => r[0])), cpu: median(runs.map((r) => r[1])) };
}

export default async function bench(): Promise<BenchMetric[]> {
  const entry = pathToFileURL(await build()).href;
  const empty = join(OUT, 'empty.mjs');
  mkdirSync(OUT, { recursive: true });
  writeFileSync(empty, 'export {};\n');
  try {
    const root = measure(entry);
    const floor = measure(pathToFileURL(empty).href);
    const metrics: BenchMetric[] = [
      { metric: 'import.root_ms', value: round(root.wall), unit: 'ms' },
      { metric: 'import.root_cpu_ms', value: round(root.cpu), unit: 'ms' },
      { metric: 'import.floor_ms', value: round(floor.wall), unit: 'ms' },
    ];
    if (existsSync(join(ROOT, 'node_modules', 'bullmq', 'package.json')))
      metrics.push({ metric: 'import.bullmq_ms', value: round(measure('bullmq').wall), unit: 'ms' });
    return metrics;
  } finally {
    rmSync(OUT, { recursive: true, force: true });
  }
}
