/**
 * The one place where real time is the point: a task that ignores its AbortSignal is cut off at its
 * deadline plus grace, by the system clock, and a CPU-bound task in a worker thread is terminated.
 * Bounds are generous (this machine is noisy); what is checked is that the attempt ends near its
 * deadline instead of never.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../store/index.ts';
import { type Baton, createBaton } from './baton.ts';
import { defineTask } from './define-task.ts';

let dir: string;
let store: SqliteStore;
let baton: Baton;
afterEach(async () => {
  await baton?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): void {
  dir = mkdtempSync(join(tmpdir(), 'baton-rt-'));
  store = openSqliteStore(join(dir, 'b.db'));
  baton = createBaton({ store, worker: { concurrency: 4 } });
}

async function attemptSpan(runId: string): Promise<number> {
  const events = await store.readEvents({ runId });
  const started = events.find((e) => e.type === 'attempt:started')?.at ?? Number.NaN;
  const ended = events.find((e) => e.type === 'attempt:timed_out')?.at ?? Number.NaN;
  return ended - started;
}

describe('cut off on time (real clock)', () => {
  it('ends the attempt of a task that ignores its signal at timeout + grace', async () => {
    open();
    const deaf = defineTask({
      name: 'deaf',
      timeout: '300ms',
      grace: '200ms',
      retry: false,
      run: () => new Promise(() => {}),
    });
    // Not cut off early: measured from before the start, since the events' instants are taken when
    // they are written, which under load can be later than the moment the attempt's timer was armed.
    const before = performance.now();
    const run = await baton.start(deaf, {});
    const out = await run.result();
    const elapsed = performance.now() - before;
    expect(out.status).toBe('partial');
    expect(out.output).toMatchObject({ skipped: true });
    expect(elapsed).toBeGreaterThanOrEqual(300 + 200 - 5);
    // Not cut off late: the recorded attempt ends near its deadline plus grace.
    expect(await attemptSpan(run.id)).toBeLessThan(300 + 200 + 1_500);
    await baton.worker?.idle();
    expect(baton.worker?.running).toBe(0);
  });

  it('terminates a CPU-bound task running in a worker thread', async () => {
    open();
    const { spinForever } = await import('./fixtures/cpu-bound.ts');
    const run = await baton.start(spinForever, {});
    const out = await run.result();
    expect(out.status).toBe('partial');
    const span = await attemptSpan(run.id);
    expect(span).toBeLessThan(10_000);
    await baton.worker?.idle();
    expect(baton.worker?.running).toBe(0);
  });
});
