/**
 * Engine state typed once: a run's options and meta are read through one decoder each, and the
 * caller's own options are kept apart (`options.user`) so they can never set an engine key.
 * Real SQLite file, manual clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { eventOf, type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask } from './define-task.ts';
import { runMetaOf } from './run-meta.ts';
import { runOptionsOf } from './run-options.ts';

let rt: TestRuntime;
beforeEach(() => {
  rt = testRuntime();
});
afterEach(() => rt.dispose());

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe("the caller's own options", () => {
  it('cannot set an engine key: a user option named mode, ttlMs or escalation changes nothing', async () => {
    const task = defineTask({ name: 'plain', research: { mode: 'codebase' }, run: () => 'done' });
    const user = {
      mode: 'no-such-mode',
      fast: true,
      escalation: 'ask',
      ttlMs: 1,
      invocationTimeoutMs: 1,
      schedule: { aiName: 'x' },
      customer: 'acme',
    };
    const run = await rt.baton.start(task, {}, { options: user });
    const started = await eventOf(rt, 'attempt:started', run.id);
    // The task's codebase mode (60 s), not a 1 ms cap nor fast mode's halved timeout.
    expect(started.data).toMatchObject({ timeoutMs: 60_000 });
    expect(await run.result()).toMatchObject({ status: 'succeeded', output: 'done' });
    const stored = await rt.baton.getRun(run.id);
    expect(stored?.options).toEqual({ user });
    expect(runOptionsOf(stored ?? { options: {} })).toEqual({ user });
  });

  it("keeps a flow's user options on every step, apart from the engine's", async () => {
    const step = defineTask({ name: 'step', run: () => 1 });
    const flow = defineFlow({ name: 'two', steps: [{ id: 'a', task: step }] });
    const run = await rt.baton.start(flow, {}, { fast: true, options: { outputStep: 'nope', team: 'x' } });
    expect((await run.result()).status).toBe('succeeded');
    const a = await rt.baton.getRun(`${run.id}.a`);
    expect(runOptionsOf(a ?? { options: {} })).toEqual({
      fast: true,
      user: { outputStep: 'nope', team: 'x' },
    });
  });

  it('refuses options that are not an object, naming the field', async () => {
    const task = defineTask({ name: 'plain', run: () => 1 });
    const err = await rt.baton.start(task, {}, { options: [1] as never }).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toMatch(/^options must be an object/);
  });
});

describe('start options the engine keeps', () => {
  it('traceparent is checked and kept; a malformed one is refused by name', async () => {
    const task = defineTask({ name: 'traced', run: () => 1 });
    const run = await rt.baton.start(task, {}, { traceparent: TRACE });
    expect(runOptionsOf((await rt.baton.getRun(run.id)) ?? { options: {} }).traceparent).toBe(TRACE);
    const err = await rt.baton.start(task, {}, { traceparent: 'nope' }).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as Error).message).toMatch(/^traceparent must be a W3C traceparent/);
  });

  it('invocationTimeout caps every attempt', async () => {
    const task = defineTask({ name: 'capped', research: { mode: 'codebase' }, run: () => 1 });
    const run = await rt.baton.start(task, {}, { invocationTimeout: '5s' });
    expect((await eventOf(rt, 'attempt:started', run.id)).data).toMatchObject({ timeoutMs: 5_000 });
  });
});

describe('rows stored before', () => {
  it("read the engine's keys by type and give the rest back as the caller's", () => {
    const old = {
      options: {
        mode: 'docs',
        fast: true,
        ttlMs: 'soon',
        schedule: { aiName: 'weather', dueAt: '2026-01-01T00:00:00.000Z' },
        customer: 'acme',
      },
    };
    expect(runOptionsOf(old)).toEqual({
      mode: 'docs',
      fast: true,
      schedule: { aiName: 'weather', dueAt: '2026-01-01T00:00:00.000Z' },
      user: { customer: 'acme' },
    });
  });

  it("decode a meta's decision history written before answeredBy, and drop damaged entries", () => {
    const meta = runMetaOf({
      meta: {
        failures: '2',
        decisions: [
          { answer: { choice: 'skip' }, by: 'policy (decision timeout)', at: '2026-01-01T00:00:00.000Z' },
          { answer: 'skip', by: 'cli', at: '2026-01-01T00:00:00.000Z' },
          { answer: { choice: 'abandon' }, by: 'cli', at: '2026-01-02T00:00:00.000Z', reason: 'r' },
        ],
        attemptsLog: [{ attempt: 1, timeoutMs: 60_000, timedOut: true }, null],
        decision: null,
      },
    });
    expect(meta).toEqual({
      failures: 0,
      decisions: [
        {
          answer: { choice: 'skip' },
          by: 'policy (decision timeout)',
          answeredBy: { kind: 'policy', trigger: 'decision_timeout' },
          at: '2026-01-01T00:00:00.000Z',
        },
        {
          answer: { choice: 'abandon' },
          by: 'cli',
          answeredBy: { kind: 'person', name: 'cli' },
          at: '2026-01-02T00:00:00.000Z',
          reason: 'r',
        },
      ],
      attemptsLog: [{ attempt: 1, timeoutMs: 60_000, timedOut: true }],
      awaiting: [],
    });
  });
});
