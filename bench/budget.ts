/**
 * Cost of the pure budget rules on the checkpoint path.
 *
 * - budget.assess_ns: one `assessTime` (validation, two ISO instants, three "N minutes" strings,
 *   two Python-style roundings, the status). Target < 2,000 ns.
 * - budget.assess_floor_ns: the floor, measured in the same run: building an object literal with
 *   the same 11 fields from values already at hand (numbers from the loop, constant strings), i.e.
 *   the allocation an assessment cannot avoid. Both keep their objects alive in a ring buffer.
 * - budget.iso_format_ns / budget.date_to_iso_string_ns: our second-precision UTC formatter against
 *   `new Date(ms).toISOString()`, the reason it is hand-rolled.
 * - budget.should_skip_ns: one degradation lookup.
 * Each figure is the median over batches after a warm-up; a checksum keeps the work from being elided.
 */
import { assessTime, formatIsoSeconds, shouldSkip } from '../src/core/budget/index.ts';

const START = Date.parse('2026-02-09T11:30:00Z');
const BATCH = 20_000;
const BATCHES = 41;
const WARMUP_BATCHES = 10;

let sink = 0;
/** Results are kept in a ring so they escape and V8 cannot skip allocating them. */
const keep: unknown[] = new Array(1024);

function medianNsPerOp(op: (i: number) => number): number {
  const samples: number[] = [];
  for (let b = 0; b < WARMUP_BATCHES + BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    let acc = 0;
    for (let i = 0; i < BATCH; i++) acc += op(b * BATCH + i);
    const ns = Number(process.hrtime.bigint() - t0) / BATCH;
    sink += acc;
    if (b >= WARMUP_BATCHES) samples.push(ns);
  }
  samples.sort((x, y) => x - y);
  return Math.round((samples[samples.length >> 1] as number) * 10) / 10;
}

export default async function bench(): Promise<Array<{ metric: string; value: number; unit: string }>> {
  const assess = medianNsPerOp((i) => {
    const a = assessTime({
      startMs: START,
      nowMs: START + i * 37,
      budgetMs: 4_500_000,
      itemsAnalyzed: i & 31,
    });
    keep[i & 1023] = a;
    return a.remaining_seconds + a.current_time.length;
  });
  const floor = medianNsPerOp((i) => {
    const a = {
      start_time: '2026-02-09T11:30:00Z',
      current_time: '2026-02-09T12:00:00Z',
      elapsed_seconds: i,
      elapsed_formatted: '30 minutes',
      remaining_seconds: 4500 - i,
      remaining_formatted: '45 minutes',
      budget_seconds: 4500,
      budget_formatted: '75 minutes',
      progress_percentage: i / 45,
      time_status: i & 1 ? 'on_track' : 'warning',
      items_per_minute: i & 31,
    };
    keep[i & 1023] = a;
    return a.remaining_seconds + a.current_time.length;
  });
  const iso = medianNsPerOp((i) => formatIsoSeconds(START + i * 1000).length);
  const dateIso = medianNsPerOp((i) => new Date(START + i * 1000).toISOString().length);
  const assessment = assessTime({
    startMs: START,
    nowMs: START + 4_300_000,
    budgetMs: 4_500_000,
    itemsAnalyzed: 3,
  });
  const kinds = ['download_full', 'deep_analysis', 'search', 'web_fetch'];
  const skip = medianNsPerOp((i) => shouldSkip(assessment, kinds[i & 3] as string).reason.length);
  if (sink === 0) throw new Error('benchmark work was elided');
  return [
    { metric: 'budget.assess_ns', value: assess, unit: 'ns' },
    { metric: 'budget.assess_floor_ns', value: floor, unit: 'ns' },
    { metric: 'budget.iso_format_ns', value: iso, unit: 'ns' },
    { metric: 'budget.date_to_iso_string_ns', value: dateIso, unit: 'ns' },
    { metric: 'budget.should_skip_ns', value: skip, unit: 'ns' },
  ];
}
