/**
 * The population of bench/waiting.ts: 100,000 runs waiting in one SQLite file, built through the
 * engine (each run really started, executed and suspended): runs asleep in `ctx.sleep('1h')`, runs
 * waiting for a decision (`ctx.waitFor('approval')`), and held results of scheduled tool calls
 * (protocol 004) due in an hour.
 */
import { type Baton, createBaton, defineTask, type Store } from '../src/index.ts';
import { openSqliteStore } from '../src/store/index.ts';
import { echoTool, startScheduled } from './_delivery-runs.ts';
import { LeadTooShort } from './_peer-due.ts';

const CHUNK = 500;
const STALL_MS = 30_000;

export const sleeper = defineTask({ name: 'bench.sleeper', run: (_: unknown, ctx) => ctx.sleep('1h') });
export const approver = defineTask({
  name: 'bench.approver',
  run: async (_: unknown, ctx) => {
    await ctx.waitFor('approval');
  },
});
/** Sleeps until `due` (epoch ms) and records how late its body resumed. */
export const dueLate: number[] = [];
export const waker = defineTask<{ due: number }, void>({
  name: 'bench.waker',
  run: async ({ due }, ctx) => {
    await ctx.sleepUntil(due);
    dueLate.push(Date.now() - due);
  },
});
export const tool = echoTool();

export function openWaiting(path: string, concurrency: number): { store: Store; baton: Baton } {
  const store = openSqliteStore(path);
  const baton = createBaton({ store, tasks: [sleeper, approver, waker], worker: { concurrency } });
  baton.register(tool);
  return { store, baton };
}

/**
 * Resolves when the store counts `n` waiting runs; fails when the count stops moving, or with
 * LeadTooShort when `dueAt` (epoch ms) comes first: runs that start after their due instant never
 * wait, and would be measured late for the wrong reason.
 */
export async function untilWaiting(store: Store, n: number, dueAt?: number): Promise<void> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const waiting = (await store.countRuns()).waiting ?? 0;
    if (waiting >= n) return;
    if (dueAt !== undefined && Date.now() >= dueAt) throw new LeadTooShort(dueAt - Date.now() - 1);
    if (waiting !== last) {
      last = waiting;
      since = performance.now();
    } else if (performance.now() - since > STALL_MS)
      throw new Error(
        `bench: stuck at ${waiting}/${n} waiting runs for ${STALL_MS} ms (runs by status ${JSON.stringify(await store.countRuns())}; store ${JSON.stringify((store as { commitStats?: unknown }).commitStats ?? null)})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Mix {
  sleepers: number;
  approvers: number;
  deliveries: number;
}

/** Starts the mix and resolves when all of it waits (on top of what already waited). */
export async function populate(baton: Baton, store: Store, mix: Mix): Promise<void> {
  const before = (await store.countRuns()).waiting ?? 0;
  const start = async (n: number, one: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < n; i += CHUNK)
      await Promise.all(Array.from({ length: Math.min(CHUNK, n - i) }, (_, k) => one(i + k)));
  };
  await start(mix.sleepers, () => baton.start(sleeper, {}));
  await start(mix.approvers, () => baton.start(approver, {}));
  const due = new Date(Date.now() + 3_600_000).toISOString();
  const ids = Array.from({ length: mix.deliveries }, (_, i) => `held-${before}-${i}`);
  await startScheduled(
    baton,
    tool,
    ids,
    ids.map(() => due),
  );
  await untilWaiting(store, before + mix.sleepers + mix.approvers + mix.deliveries);
}
