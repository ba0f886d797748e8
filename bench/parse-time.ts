/**
 * How fast delivery-time expressions are read (`parseSchedule`, what `baton parse-time` runs).
 *
 * - parse_time.warm_per_s: expressions per second in a warm process, over every expression of the
 *   conformance corpora and Baton's own corpus (~1,380, English and Chinese, holidays and lunar
 *   dates included), median of 9 passes after 3 warm-up passes. Target ≥ 0.1× its floor (the machine
 *   is shared: a ratio to work measured in the same run holds under load, a fixed rate does not).
 * - parse_time.floor_warm_per_s: the floor in the same run: the least work any answer needs, one
 *   zone-aware luxon instant plus an offset and its ISO string, per expression.
 * - parse_time.cold_per_s: a fresh process reads the first 200 expressions it has ever seen (cold
 *   code, regexes compiled, the lunar calendar loaded on first use): expressions per second over
 *   that first pass, median of 5 processes. Target ≥ 0.05× its floor: the pass includes loading
 *   lunar-javascript on the first lunar date (~150 ms on an idle machine).
 * - parse_time.floor_cold_per_s: the same first pass in a fresh process doing only the floor work
 *   (luxon imported, zones first used), median of 5.
 * - parse_time.import_ms: importing the schedule module in a fresh process (tsx transpiles the
 *   sources; a built package is faster), median of 5.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { parseSchedule } from '../src/schedule/index.ts';
import { loadCorpus } from '../test/schedule-corpus/corpus.ts';
import { type BenchMetric, median, round } from './_stats.ts';

const ROOT = join(import.meta.dirname, '..');

interface Item {
  text: string;
  now: number;
  zone: string;
}

function items(): Item[] {
  const out: Item[] = [];
  for (const lang of ['en', 'zh'] as const)
    for (const part of ['dev', 'heldout'] as const)
      for (const c of loadCorpus(lang, part)) out.push({ text: c.text, now: c.now, zone: c.zone });
  return out;
}

let sink = 0;

function pass(list: readonly Item[]): number {
  const t0 = process.hrtime.bigint();
  for (const it of list) {
    try {
      sink += parseSchedule(it.text, { now: it.now, timezone: it.zone }).at & 1;
    } catch {
      sink += 1; // refusals are answers too, and cost what they cost
    }
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function floorPass(list: readonly Item[]): number {
  const t0 = process.hrtime.bigint();
  for (const it of list)
    sink += (DateTime.fromMillis(it.now, { zone: it.zone }).plus({ minutes: 5 }).toISO() as string).length;
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const child = (floor: boolean) => `
const t0 = performance.now();
const { parseSchedule } = await import(${JSON.stringify(join(ROOT, 'src/schedule/index.ts'))});
const { DateTime } = await import('luxon');
const t1 = performance.now();
const { loadCorpus } = await import(${JSON.stringify(join(ROOT, 'test/schedule-corpus/corpus.ts'))});
const list = [...loadCorpus('zh', 'dev'), ...loadCorpus('en', 'dev')].filter((_, i) => i % 4 === 0).slice(0, 200);
const t2 = performance.now();
for (const c of list) {
  try {
    ${floor ? 'DateTime.fromMillis(c.now, { zone: c.zone }).plus({ minutes: 5 }).toISO();' : 'parseSchedule(c.text, { now: c.now, timezone: c.zone });'}
  } catch {}
}
const t3 = performance.now();
console.log(JSON.stringify({ importMs: t1 - t0, perS: list.length / ((t3 - t2) / 1000) }));
`;

function coldRun(floor = false): { importMs: number; perS: number } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child(floor)], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error(`cold parse-time child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as { importMs: number; perS: number };
}

export default async function bench(): Promise<BenchMetric[]> {
  const list = items();
  const cold = Array.from({ length: 5 }, () => coldRun());
  const coldFloor = Array.from({ length: 5 }, () => coldRun(true));
  for (let i = 0; i < 3; i++) {
    pass(list);
    floorPass(list);
  }
  const warm: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < 9; i++) {
    warm.push(list.length / pass(list));
    floor.push(list.length / floorPass(list));
  }
  if (sink === 0.5) console.log(sink);
  return [
    { metric: 'parse_time.warm_per_s', value: round(median(warm)), unit: 'expr/s' },
    { metric: 'parse_time.floor_warm_per_s', value: round(median(floor)), unit: 'expr/s' },
    { metric: 'parse_time.cold_per_s', value: round(median(cold.map((c) => c.perS))), unit: 'expr/s' },
    {
      metric: 'parse_time.floor_cold_per_s',
      value: round(median(coldFloor.map((c) => c.perS))),
      unit: 'expr/s',
    },
    { metric: 'parse_time.import_ms', value: round(median(cold.map((c) => c.importMs))), unit: 'ms' },
  ];
}
