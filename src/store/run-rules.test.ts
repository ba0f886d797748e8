/**
 * The shared flow engine as pure rules: the writes it plans, and how each dialect renders them.
 * (The three store contract suites and the parity test check the same rules applied by both stores.)
 */
import { describe, expect, it } from 'vitest';
import { renderRunUpdate } from './dialect.ts';
import type { RunRecord } from './records.ts';
import {
  encodePatch,
  planAdvance,
  planCancelOpenSteps,
  planParentWake,
  planTransition,
} from './run-rules.ts';

const T = 1_000;
function run(id: string, over: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    parentId: null,
    rootId: id,
    stepId: null,
    kind: 'task',
    name: 'work',
    input: {},
    status: 'queued',
    waitReason: null,
    wakeAt: null,
    attempt: 0,
    dependsOn: [],
    priority: 0,
    createdAt: 0,
    startedAt: null,
    finishedAt: null,
    updatedAt: 0,
    budgetMs: null,
    deadlineAt: null,
    output: undefined,
    error: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    leaseToken: 0,
    source: null,
    options: {},
    meta: {},
    expiresAt: null,
    ...over,
  } as RunRecord;
}

describe('run rules', () => {
  it('plans a step ending: the lease dropped, and its flow advancing', () => {
    const step = run('f.a', {
      parentId: 'f',
      rootId: 'f',
      status: 'running',
      leaseOwner: 'w',
      leaseToken: 3,
    });
    const patch = { status: 'succeeded' as const, output: { b: 1 }, finishedAt: T };
    const plan = planTransition(
      step,
      step.id,
      patch,
      encodePatch(patch),
      { fence: { runId: 'f.a', token: 3 } },
      T,
    );
    expect(plan.advance).toBe('f');
    // A task's open children (ctx.invoke) end with it; a step with none finds nothing to cancel.
    expect(plan.cancelSteps).toBe(true);
    expect(plan.record).toMatchObject({
      status: 'succeeded',
      leaseOwner: null,
      output: { b: 1 },
      updatedAt: T,
    });
    expect(() =>
      planTransition(step, step.id, patch, encodePatch(patch), { fence: { runId: 'f.a', token: 2 } }, T),
    ).toThrow(/no longer held/);
    expect(() => planTransition(undefined, 'nope', patch, encodePatch(patch), {}, T)).toThrow(
      /no run with id nope/,
    );
  });

  it('blocks the dependents of a failed step, queues ready ones, and finishes the flow', () => {
    const flow = run('f', { kind: 'flow', status: 'running', startedAt: 0 });
    const steps = [
      run('f.a', {
        parentId: 'f',
        stepId: 'a',
        status: 'failed',
        error: { name: 'E', code: 'TASK_FAILED', message: 'x' },
      }),
      run('f.b', {
        parentId: 'f',
        stepId: 'b',
        status: 'waiting',
        waitReason: 'dependency',
        dependsOn: ['a'],
      }),
      run('f.c', { parentId: 'f', stepId: 'c', status: 'succeeded', output: 1 }),
    ];
    const plan = planAdvance(flow, steps, T, 10);
    expect(plan.events.map((e) => `${e.runId} ${e.type}`)).toEqual([
      'f.b run:cancelled',
      'f flow:step_blocked',
      'f run:failed',
    ]);
    expect(plan.finished).toBe(true);
    const after = plan;
    const finish = after.updates.at(-1);
    expect(finish?.set).toContainEqual(['expires_at', T + 10]);
    const ready = planAdvance(
      flow,
      [
        run('f.a', { parentId: 'f', stepId: 'a', status: 'succeeded', output: 2 }),
        run('f.b', {
          parentId: 'f',
          stepId: 'b',
          status: 'waiting',
          waitReason: 'dependency',
          dependsOn: ['a'],
        }),
      ],
      T,
      10,
    );
    expect(ready.finished).toBe(false);
    expect(ready.updates[0]).toMatchObject({ ids: ['f.b'], ifStatus: 'waiting' });
    expect(ready.events).toMatchObject([{ runId: 'f.b', type: 'run:queued' }]);
    expect(planAdvance({ ...flow, status: 'cancelled' }, steps, T, 10)).toEqual({
      updates: [],
      events: [],
      finished: false,
    });
  });

  it('renders one planned update in each dialect', () => {
    const writes = planCancelOpenSteps('f', 'cancelled', ['f.a', 'f.b'], T);
    const [update] = writes.updates;
    if (!update) throw new Error('no update');
    expect(renderRunUpdate('postgres', '"baton".runs', update).text).toBe(
      'UPDATE "baton".runs SET status = $1, wait_reason = $2, wake_at = $3, lease_owner = $4, lease_expires_at = $5, finished_at = $6, updated_at = $7 WHERE id = ANY($8::text[])',
    );
    const sqlite = renderRunUpdate('sqlite', 'runs', { ...update, ifStatus: 'waiting' });
    expect(sqlite.text).toMatch(/WHERE id IN \(SELECT value FROM json_each\(\?\)\) AND status = \?$/);
    expect(sqlite.values.slice(-2)).toEqual(['["f.a","f.b"]', 'waiting']);
  });

  it('wakes a task waiting on its children when one ends, and never advances it like a flow', () => {
    const parent = run('p', { kind: 'task', status: 'waiting', waitReason: 'child' });
    const done = run('p:invoke-1', { parentId: 'p', rootId: 'p', status: 'succeeded', output: 1 });
    const plan = planAdvance(parent, [done], T, 1000);
    expect(plan.finished).toBe(false);
    expect(plan.updates).toEqual([
      {
        ids: ['p'],
        set: [
          ['status', 'queued'],
          ['wait_reason', null],
          ['wake_at', null],
          ['updated_at', T],
        ],
        ifStatus: 'waiting',
      },
    ]);
    expect(plan.events.map((e) => e.data)).toEqual([{ reason: 'woken' }]);
    // Still running (it checks its children itself as it suspends), or waiting for something else.
    expect(planParentWake(run('p', { kind: 'task', status: 'running' }), T).updates).toEqual([]);
    expect(
      planParentWake(run('p', { kind: 'task', status: 'waiting', waitReason: 'decision' }), T).updates,
    ).toEqual([]);
  });
});
