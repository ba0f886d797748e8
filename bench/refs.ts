/**
 * Data references: the protocol's confidence filter `$.atoms[?(@.confidence>0.8)]` over a task
 * output of 100,000 atoms, resolved end to end by the resolver (fetch, compiled-query cache,
 * json-p3 evaluation, result shaping), against the floor of a plain `Array.prototype.filter` over
 * the same array in the same run. Median of 9 runs after 3 warm-up runs.
 */
import { createResolver } from '../src/refs/index.ts';
import { systemClock } from '../src/time/index.ts';

const ATOMS = 100_000;
const WARMUP = 3;
const RUNS = 9;
const PATH = '$.atoms[?(@.confidence>0.8)]';

function makeOutput() {
  const types = ['claim', 'evidence', 'methodology', 'background'];
  const atoms = Array.from({ length: ATOMS }, (_, i) => ({
    atom_id: `atom_${String(i).padStart(6, '0')}`,
    atom_type: types[i % types.length],
    content: `Finding ${i}: self-attention replaces recurrence in layer ${i % 12}.`,
    // A fixed spread of confidences, so exactly 19% of atoms are above 0.8.
    confidence: (i % 100) / 100,
    evidence: [`evidence_${i}`],
  }));
  return { atoms, relations: [], metadata: { quality_score: 0.9 } };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function measure(fn: () => Promise<number> | number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const t0 = performance.now();
    await fn();
    const dt = performance.now() - t0;
    if (i >= WARMUP) times.push(dt);
  }
  return median(times);
}

export default async function bench(): Promise<Array<{ metric: string; value: number; unit: string }>> {
  const output = makeOutput();
  const resolver = createResolver({
    clock: systemClock,
    getTaskOutput: async () => ({ status: 'succeeded', output }),
  });
  const expected = output.atoms.filter((a) => a.confidence > 0.8).length;

  const resolved = await measure(async () => {
    const r = await resolver.resolveReference({ ref_type: 'task_output', task_id: 'scholar', path: PATH });
    if (!r.ok || (r.value as unknown[]).length !== expected)
      throw new Error('bench: wrong resolution result');
    return expected;
  });
  const floor = await measure(() => {
    const kept = output.atoms.filter((a) => a.confidence > 0.8);
    if (kept.length !== expected) throw new Error('bench: wrong floor result');
    return kept.length;
  });

  return [
    { metric: 'refs.jsonpath_filter_100k_ms', value: Number(resolved.toFixed(2)), unit: 'ms' },
    { metric: 'refs.jsonpath_filter_100k_floor_ms', value: Number(floor.toFixed(3)), unit: 'ms' },
  ];
}
