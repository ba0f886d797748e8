/**
 * Thread isolation against a real SQLite store and real worker threads. Threads run on the system
 * clock — a ManualClock cannot cross into another thread — so these tests use real time, and wait
 * for log lines, events and promises rather than sleeping. Each thread start costs ~0.3 s here (tsx), ~0.12 s from built JS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BatonError, type BatonEvent, NonRetriableError, newId } from '../../core/index.ts';
import { type Fence, openSqliteStore, type RunRecord } from '../../store/index.ts';
import { systemClock } from '../../time/index.ts';
import { AttemptContext } from '../attempt-context.ts';
import { LazyAbort } from '../lazy-abort.ts';
import { raceAttempt } from '../race-attempt.ts';
import type { TimeKeeperInit } from '../time-keeper.ts';
import { startThreadAttempt, type ThreadAttempt } from './index.ts';

const FIXTURES = new URL('./fixtures/thread-tasks.ts', import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), 'baton-thread-'));
const store = openSqliteStore(join(dir, 'baton.db'));
let owners = 0;

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A pino logger whose lines the test can read and wait for. */
function captureLog() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const waiting: { msg: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  const log = pino(
    { level: 'info' },
    {
      write(text: string) {
        const line = JSON.parse(text) as Record<string, unknown>;
        lines.push(line);
        raw.push(text);
        for (const w of waiting.filter((x) => x.msg === line.msg)) w.resolve(line);
      },
    },
  ).child({ runId: 'bound-run', attempt: 7 });
  const next = (msg: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.find((l) => l.msg === msg);
      if (seen) resolve(seen);
      else waiting.push({ msg, resolve });
    });
  return { log, lines, raw, next };
}

async function claim(name: string, existing?: RunRecord) {
  const owner = `owner-${++owners}`;
  if (existing) await store.releaseOwners([existing.leaseOwner ?? ''], 'released');
  else
    await store.createRuns(
      [
        {
          id: newId('run', systemClock.now()),
          kind: 'task',
          name,
          input: { topic: 'rust' },
          status: 'queued',
        },
      ],
      [],
    );
  const [run] = await store.claimRuns({ owner, leaseMs: 60_000, limit: 1, names: [name] });
  if (!run) throw new Error(`no run of ${name} to claim`);
  return run;
}

function timeInit(budgetMs = 3_600_000): TimeKeeperInit {
  return { startMs: systemClock.now(), budgetMs, checkpoints: {}, itemsAnalyzed: 0 };
}

interface AttemptOptions {
  log?: Logger;
  signal?: AbortSignal;
  fence?: Fence;
  time?: TimeKeeperInit;
}

/** The parent side of an attempt, as the engine builds it (the memo from the recorded steps). */
async function context(run: RunRecord, o: AttemptOptions = {}) {
  const steps = await store.getSteps(run.id);
  const time = o.time ?? timeInit();
  const ctx = new AttemptContext({
    store,
    clock: systemClock,
    log: () => o.log ?? captureLog().log,
    fence: o.fence ?? { runId: run.id, token: run.leaseToken },
    fetchRef: async () => {
      throw new Error('no references in these tests');
    },
    startChild: async () => {
      throw new Error('no children in these tests');
    },
    runId: run.id,
    rootId: run.rootId,
    stepId: run.stepId,
    taskName: run.name,
    attempt: run.attempt,
    timeoutMs: 60_000,
    deadlineAt: null,
    version: 1,
    abort: { signal: o.signal ?? new AbortController().signal },
    memo: new Map(steps.map((s) => [s.key, s.output])),
    lastCheckpoint: undefined,
    lastSeq: 0,
    dependencies: {},
    mode: undefined,
    fast: false,
    time,
  });
  return { ctx, time };
}

async function attempt(run: RunRecord, o: AttemptOptions = {}) {
  const { ctx, time } = await context(run, o);
  return {
    ctx,
    thread: startThreadAttempt({ module: FIXTURES, taskName: run.name, input: run.input, ctx, time }),
  };
}

/** Resolves once events of these types have been committed for the run (advisory events are written in the background). */
function eventsOf(runId: string, types: string[]): Promise<BatonEvent[]> {
  return new Promise((resolve) => {
    const got: BatonEvent[] = [];
    const off = store.onEvents((events) => {
      got.push(...events.filter((e) => e.runId === runId));
      if (types.every((t) => got.some((e) => e.type === t))) {
        off();
        resolve(got);
      }
    });
  });
}

async function settledError(thread: ThreadAttempt): Promise<BatonError> {
  const err = await thread.result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BatonError);
  await thread.exited;
  return err as BatonError;
}

describe('thread isolation', { timeout: 15_000 }, () => {
  it('records steps, checkpoints and partials through the bridge and replays the step on the next attempt', async () => {
    const logs = captureLog();
    const first = await claim('thread-bridge');
    const one = await attempt(first, { log: logs.log });
    const progressed = eventsOf(first.id, ['progress:reported']);
    const value = await one.thread.result;
    expect(value).toEqual({
      fetched: { topic: 'rust', ranInAttempt: 1, at: '1970-01-01T00:00:00.000Z' },
      seq: 1,
      attempt: 1,
      inThread: true,
    });
    expect((await store.getSteps(first.id)).map((s) => [s.key, s.attempt])).toEqual([['fetch', 1]]);
    const [checkpoint] = await store.listCheckpoints(first.id);
    expect(checkpoint?.state).toEqual({ done: ['a'] });
    expect(checkpoint?.record).toMatchObject({ items_analyzed: 1, progress_percentage: 50 });
    expect((await store.listPartials(first.id)).flatMap((p) => p.findings)).toEqual([
      { finding: 'a' },
      { finding: 'b' },
    ]);
    expect(one.ctx.findings).toHaveLength(2);
    const done = (await progressed).find((e) => e.type === 'progress:reported');
    expect(done?.data).toEqual({ done: 2, total: 2 });
    // The thread's log line went through the attempt's logger, its bindings written once.
    const ran = await logs.next('step ran');
    expect(ran).toMatchObject({ key: 'fetch', runId: 'bound-run', attempt: 7, level: 30 });
    const text = logs.raw.find((t) => t.includes('"step ran"')) ?? '';
    expect(text.split('"runId"')).toHaveLength(2);
    await one.thread.exited;

    const second = await claim('thread-bridge', first);
    expect(second.attempt).toBe(2);
    const replayLogs = captureLog();
    const two = await attempt(second, { log: replayLogs.log });
    expect(await two.thread.result).toMatchObject({ fetched: { ranInAttempt: 1 }, attempt: 2 });
    expect(two.ctx.replayed).toEqual(['fetch']);
    expect(replayLogs.lines.some((l) => l.msg === 'step ran')).toBe(false);
    expect(await store.getSteps(first.id)).toHaveLength(1);
    expect((await store.listCheckpoints(first.id)).map((c) => c.attempt)).toEqual([1, 2]);
  });

  it('refuses the writes of a thread whose lease was taken over, with LEASE_LOST', async () => {
    const first = await claim('thread-bridge');
    const second = await claim('thread-bridge', first);
    const stale = await attempt(second, { fence: { runId: first.id, token: first.leaseToken } });
    const err = await settledError(stale.thread);
    expect(err.code).toBe('LEASE_LOST');
    expect(await store.getSteps(first.id)).toEqual([]);
    expect(await store.listCheckpoints(first.id)).toEqual([]);
  });

  it('stops a task that spins the CPU at its deadline by terminating its thread', async () => {
    const logs = captureLog();
    const run = await claim('thread-spin');
    const controller = new LazyAbort();
    const { thread } = await attempt(run, { log: logs.log, signal: controller.signal });
    await logs.next('spinning');
    const outcome = await raceAttempt(() => thread.result, {
      clock: systemClock,
      controller,
      timeoutMs: 50,
      graceMs: 50,
    });
    expect(outcome.kind).toBe('interrupted');
    expect(outcome.kind === 'interrupted' && outcome.late).toBeUndefined();
    const exits: number[] = [];
    void thread.exited.then((code) => exits.push(code));
    const ended = thread.terminate();
    expect(thread.terminate()).toBe(ended);
    await ended;
    expect(exits).toEqual([1]);
    await expect(thread.result).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('forwards the attempt signal into the thread with its reason rebuilt', async () => {
    const logs = captureLog();
    const run = await claim('thread-wait');
    const controller = new AbortController();
    const { thread } = await attempt(run, { log: logs.log, signal: controller.signal });
    await logs.next('waiting');
    controller.abort(new BatonError('TIMEOUT', 'attempt timed out after 50 ms'));
    expect(await thread.result).toEqual({
      aborted: true,
      sleepRejectedWithReason: true,
      isBatonError: true,
      code: 'TIMEOUT',
      message: 'attempt timed out after 50 ms',
    });
    expect(await thread.exited).toBe(1);
  });

  it('starts the thread already aborted when the attempt signal fired before it', async () => {
    const run = await claim('thread-wait');
    const controller = new AbortController();
    controller.abort(new BatonError('CANCELLED', 'cancelled by the user'));
    const { thread } = await attempt(run, { signal: controller.signal });
    expect(await thread.result).toMatchObject({
      aborted: true,
      code: 'CANCELLED',
      message: 'cancelled by the user',
    });
  });

  it('computes time locally and forwards skipped and degraded tools and the mode change', async () => {
    const run = await claim('thread-tools');
    const events = eventsOf(run.id, ['tool:skipped', 'tool:degraded', 'time:mode_changed']);
    const { thread } = await attempt(run, { time: timeInit(60_000) });
    expect(await thread.result).toEqual({
      mode: 'ACCELERATE',
      download: null,
      analysis: 'cheap: Quick summary only',
    });
    const seen = await events;
    expect(seen.find((e) => e.type === 'tool:skipped')?.data).toMatchObject({
      kind: 'download_full',
      level: 'critical',
    });
    expect(seen.find((e) => e.type === 'tool:degraded')?.data).toMatchObject({ kind: 'deep_analysis' });
    expect(seen.filter((e) => e.type === 'time:mode_changed')).toHaveLength(1);
    const moments = (await store.readEvents({ runId: run.id }))
      .filter((e) => e.type === 'checkpoint:saved')
      .map((e) => (e.data as { moment?: string }).moment);
    expect(moments).toContain('before_deep_analysis');
    const checkpoints = await store.listCheckpoints(run.id);
    // The checkpoint ctx.tool takes repeats the state last saved, with the items counted in the thread.
    expect(checkpoints.at(-1)).toMatchObject({ state: { papers: 3 }, record: { items_analyzed: 3 } });
  });

  it('rejects with the task error, its class, code, message and data kept', async () => {
    const run = await claim('thread-non-retriable');
    const { thread } = await attempt(run);
    const err = await settledError(thread);
    expect(err).toBeInstanceOf(NonRetriableError);
    expect(err).toMatchObject({
      code: 'NON_RETRIABLE',
      message: 'the source is gone for good',
      data: { source: 'arxiv' },
    });
  });

  it('refuses ctx.invoke and ctx.waitFor in the thread, saying where to call them instead', async () => {
    const run = await claim('thread-orchestrates');
    const { thread } = await attempt(run);
    expect(await thread.result).toEqual({
      invoke: `INVALID_OPTION: ctx.invoke("thread-spin") is not available in a task with isolation: 'thread'; invoke from a task without it (the child may use a thread)`,
      waitFor: `INVALID_OPTION: ctx.waitFor("approve") is not available in a task with isolation: 'thread'; wait in a task without it`,
    });
  });

  it('says clearly when the result cannot leave the thread', async () => {
    const run = await claim('thread-returns-function');
    const err = await settledError((await attempt(run)).thread);
    expect(err.code).toBe('TASK_FAILED');
    expect(err.message).toContain(
      'task "thread-returns-function" returned a value that cannot be passed out of its thread',
    );
  });

  it('rejects with TASK_FAILED when the thread crashes', async () => {
    const run = await claim('thread-crash');
    const err = await settledError((await attempt(run)).thread);
    expect(err.code).toBe('TASK_FAILED');
    expect(err.message).toBe('the thread of task "thread-crash" crashed: the parser blew up');
  });

  it('names the task that is missing and the tasks the module does export', async () => {
    const run = await claim('thread-missing');
    const err = await settledError((await attempt(run)).thread);
    expect(err.code).toBe('TASK_NOT_FOUND');
    expect(err.message).toContain('exports no task named "thread-missing"');
    expect(err.message).toContain('"thread-bridge"');
    expect(err.message).toContain('"thread-non-retriable"');
  });

  it('says which module cannot be loaded', async () => {
    const run = await claim('thread-bridge');
    const { ctx } = await context(run);
    const missing = join(dir, 'no-such-tasks.ts');
    const thread = startThreadAttempt({
      module: missing,
      taskName: 'thread-bridge',
      input: {},
      ctx,
      time: timeInit(),
    });
    const err = await settledError(thread);
    expect(err.code).toBe('TASK_NOT_FOUND');
    expect(err.message).toContain(`cannot load module file://${missing}`);
  });

  it('refuses a relative module path and an input that cannot be cloned without starting a thread', async () => {
    const run = await claim('thread-bridge');
    const { ctx } = await context(run);
    const relative = startThreadAttempt({
      module: './tasks.ts',
      taskName: 'x',
      input: {},
      ctx,
      time: timeInit(),
    });
    expect(relative.threadId).toBe(-1);
    await expect(relative.result).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      message: expect.stringContaining('module must be a file URL or an absolute path'),
    });
    const unclonable = startThreadAttempt({
      module: FIXTURES,
      taskName: 'x',
      input: { f: () => 1 },
      ctx,
      time: timeInit(),
    });
    expect(unclonable.threadId).toBe(-1);
    await expect(unclonable.result).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('the input of task "x" cannot be passed to its thread'),
    });
  });
});
