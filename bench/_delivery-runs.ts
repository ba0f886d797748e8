/**
 * Shared parts of the delivery benchmark (not a bench itself: `_` prefix): the scheduled tool, a
 * way to start many scheduled runs, an event counter with a stall watchdog, the wall-to-monotonic
 * mapping of due instants, and the heap and file-size probes.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type Baton, type BatonEvent, defineTool, type Store, type ToolDefinition } from '../src/index.ts';
import { sqliteDriver } from '../src/store/index.ts';

const { Database } = sqliteDriver();

/** Starts issued together, so their inserts share commits (as in bench/_throughput.ts). */
const CHUNK = 500;
/** No matching event for this long means the engine is stuck, not slow: fail instead of hanging. */
const STALL_MS = 15_000;

export type EchoTool = ToolDefinition<{ i: number }, number>;

/** A trivial tool that opts in to `schedule` (protocol 004) and returns its argument at once. */
export function echoTool(): EchoTool {
  return defineTool<{ i: number }, number>({
    name: 'bench_echo',
    inputSchema: {
      type: 'object',
      properties: { i: { type: 'integer' }, schedule: { type: 'string' } },
      required: ['i'],
    },
    handler: (args) => args.i,
  });
}

/** Run ids `${prefix}-${i}`, so an event's run id gives its index (and its due instant). */
export function runIds(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

export function indexOf(runId: string): number {
  return Number(runId.slice(runId.lastIndexOf('-') + 1));
}

/** `n` due instants (epoch ms) spread evenly over `windowMs` from `first`. */
export function spread(first: number, windowMs: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => first + Math.floor((i * windowMs) / n));
}

/** Starts one scheduled run per id, due at the ISO instant of `dues[i]`. */
export async function startScheduled(
  baton: Baton,
  tool: EchoTool,
  ids: readonly string[],
  schedules: readonly string[],
): Promise<void> {
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    await Promise.all(
      chunk.map((id, k) => baton.start(tool, { i: i + k, schedule: schedules[i + k] as string }, { id })),
    );
  }
}

export interface EventCount {
  /** Resolves when `expected` matching events were seen; rejects when none came for STALL_MS. */
  readonly done: Promise<void>;
  seen(): number;
  stop(): void;
}

/**
 * Counts committed events of one type as a `store.onEvents` listener sees them, calling `each`
 * with the `performance.now()` of the notification (one reading per committed batch).
 */
export function countEvents(
  store: Store,
  type: string,
  expected: number,
  each?: (e: BatonEvent, seenAt: number) => void,
): EventCount {
  let seen = 0;
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const off = store.onEvents((events) => {
    const at = performance.now();
    for (const e of events) {
      if (e.type !== type) continue;
      each?.(e, at);
      if (++seen === expected) resolve();
    }
  });
  let last = -1;
  let since = performance.now();
  const watchdog = setInterval(() => {
    if (seen !== last) {
      last = seen;
      since = performance.now();
    } else if (performance.now() - since > STALL_MS)
      reject(new Error(`bench: stuck at ${seen}/${expected} ${type} events for ${STALL_MS} ms`));
  }, 1_000);
  const stop = () => {
    clearInterval(watchdog);
    off();
  };
  done.then(stop, stop);
  return { done, seen: () => seen, stop };
}

/**
 * Maps wall instants (epoch ms, what the engine stores and compares) onto `performance.now()`.
 * Sampled just after `Date.now()` ticks, so the mapping is exact to a few microseconds.
 */
export function wallToMonotonic(): (wallMs: number) => number {
  const start = Date.now();
  while (Date.now() === start) {
    // Spin (at most 1 ms) until the millisecond turns over.
  }
  const wall = Date.now();
  const mono = performance.now();
  return (wallMs) => mono + (wallMs - wall);
}

/** A full GC: `global.gc` when node runs with --expose-gc, else the same function through V8's flags. */
let gc: (() => void) | undefined;

export function collectGarbage(): void {
  if (!gc) {
    gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    }
  }
  gc();
}

/** Heap in use after full collections (several: weak callbacks and finalizers free more on a second pass). */
export function settledHeap(): number {
  for (let i = 0; i < 3; i++) collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** The database's size as SQLite sees it (`page_count * page_size`, WAL frames included), from a second connection. */
export function databaseBytes(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const size = db.pragma('page_size', { simple: true }) as number;
    return pages * size;
  } finally {
    db.close();
  }
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}
