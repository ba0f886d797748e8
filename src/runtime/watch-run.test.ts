/**
 * Waiting for a run to end (TerminalWatcher): this process's own commits answer waiters through the
 * store's listener; a poll catches what other processes wrote, and on SQLite it reads nothing while
 * no other connection committed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { openSqliteStore, type Store } from '../store/index.ts';
import { ManualClock } from '../time/index.ts';
import { type Baton, createBaton } from './baton.ts';
import { defineTask } from './define-task.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const never = defineTask({ name: 'never', run: async () => 'unreachable' });

function open(file: string, clock: ManualClock): { baton: Baton; store: Store } {
  const store = openSqliteStore(file);
  const baton = createBaton({ store, clock, tasks: [never], worker: false, pollMs: 250 });
  cleanups.push(() => baton.close());
  return { baton, store };
}

/** Two connections to one file (two processes, as far as SQLite can tell) and a run made by the first. */
async function twoConnections(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'runs.db');
  const clock = new ManualClock(Date.UTC(2026, 10, 28));
  const here = open(file, clock);
  const elsewhere = open(file, clock);
  await Promise.all([here.baton.ready(), elsewhere.baton.ready()]);
  const run = await here.baton.start(never, {});
  return { clock, here, elsewhere, run };
}

it('polls for other processes without reading while no other connection committed, and answers when one did', async () => {
  const { clock, here, elsewhere, run } = await twoConnections('baton-watch-');
  const outcome = here.baton.result(run.id);
  let reads = 0;
  const getRun = here.store.getRun.bind(here.store);
  here.store.getRun = (id) => {
    reads++;
    return getRun(id);
  };
  // The waiter's own reads (the run as it is now) are done by then.
  await clock.advance(10);
  reads = 0;
  await clock.advance(2_500);
  // Ten polls, no other writer: before, each poll read the run again.
  expect(reads).toBe(0);
  // Another connection to the file (another process, as far as SQLite can tell) ends it.
  await elsewhere.baton.cancel(run.id);
  await clock.advance(250);
  expect(await outcome).toMatchObject({ status: 'cancelled' });
  expect(reads).toBeGreaterThan(0);
});

it("follows a run's events without reading while no other connection committed", async () => {
  const { clock, here, elsewhere, run } = await twoConnections('baton-follow-');
  const seen: string[] = [];
  const following = (async () => {
    for await (const e of here.baton.events(run.id)) seen.push(e.type);
  })();
  await clock.advance(10);
  expect(seen).toContain('run:created');
  let reads = 0;
  const readEvents = here.store.readEvents.bind(here.store);
  here.store.readEvents = (q) => {
    reads++;
    return readEvents(q);
  };
  await clock.advance(2_500);
  // Ten polls, no other writer: before, each poll read the run's events again.
  expect(reads).toBe(0);
  await elsewhere.baton.cancel(run.id);
  await clock.advance(250);
  await following;
  expect(seen).toContain('run:cancelled');
});
