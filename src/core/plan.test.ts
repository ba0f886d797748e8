import { describe, expect, it } from 'vitest';
import { normalizePlan, topologicalOrder, validatePlan } from './plan.ts';

const checkers = {
  hasTask: (n: string) => ['local__task1', 'local__task2', 'local__task3', 'sum'].includes(n),
  checkInput: (_task: string, input: unknown) =>
    (input as { n?: unknown }).n === 'bad' ? ['n must be a number, got "bad"'] : [],
};

describe('plans', () => {
  it("reads the protocol's plan shape with index-based dependsOn", () => {
    const { plan, problems } = normalizePlan({
      plan: {
        steps: [
          { aiName: 'local__task1', draftArgs: { schedule: '1分钟后' } },
          { aiName: 'local__task2', draftArgs: { schedule: '2分钟后' }, dependsOn: [0] },
          { aiName: 'local__task3', draftArgs: { schedule: '3分钟后' }, dependsOn: [1] },
        ],
      },
    });
    expect(problems).toEqual([]);
    expect(plan.steps.map((s) => [s.id, s.task, s.dependsOn])).toEqual([
      ['0', 'local__task1', []],
      ['1', 'local__task2', ['0']],
      ['2', 'local__task3', ['1']],
    ]);
    expect(plan.steps[1]?.input).toEqual({ schedule: '2分钟后' });
  });

  it('accepts ids and mixes id and index references', () => {
    const { plan, problems } = normalizePlan({
      steps: [
        { id: 'a', task: 'sum' },
        { id: 'b', task: 'sum', dependsOn: ['a'] },
        { id: 'c', task: 'sum', dependsOn: [0, 'b'] },
      ],
    });
    expect(problems).toEqual([]);
    expect(topologicalOrder(plan).map((s) => s.id)).toEqual(['a', 'b', 'c']);
  });

  it('reports every problem at once, each with its step', () => {
    const { problems } = validatePlan(
      {
        steps: [
          { id: 'a', task: 'sum', dependsOn: ['c'] },
          { id: 'b', task: 'sum', dependsOn: ['a'] },
          { id: 'c', task: 'sum', dependsOn: ['b'] },
          { id: 'd', task: 'nope' },
          { id: 'e', task: 'sum', dependsOn: ['zzz', 9], input: { n: 'bad' } },
          { id: 'a', task: 'sum' },
        ],
      },
      checkers,
    );
    const byKind = (k: string) => problems.filter((p) => p.kind === k);
    expect(byKind('cycle').map((p) => p.message)).toEqual(['cycle: a → c → b → a']);
    expect(byKind('unknown_task')).toEqual([
      {
        kind: 'unknown_task',
        step: 'd',
        field: 'steps[3].task',
        message: 'step "d" uses unknown task "nope"',
      },
    ]);
    expect(byKind('dangling').map((p) => [p.step, p.field])).toEqual([
      ['e', 'steps[4].dependsOn[0]'],
      ['e', 'steps[4].dependsOn[1]'],
    ]);
    expect(byKind('bad_input')).toMatchObject([{ step: 'e', message: 'n must be a number, got "bad"' }]);
    expect(byKind('duplicate_id')).toMatchObject([{ step: 'a' }]);
  });

  it('names a self-dependency, a missing task name, and a plan without steps', () => {
    expect(normalizePlan({ steps: [{ id: 'x', task: 'sum', dependsOn: ['x'] }] }).problems[0]?.message).toBe(
      'step "x" depends on itself',
    );
    expect(normalizePlan({ steps: [{ id: 'x' }] }).problems[0]?.field).toBe('steps[0].task');
    expect(normalizePlan({ plan: {} }).problems[0]?.message).toBe(
      'plan.steps must be an array of steps, got undefined',
    );
    expect(normalizePlan([]).problems[0]?.field).toBe('steps');
  });

  it('rejects ids that are unsafe to print or put in a URL', () => {
    const { problems } = normalizePlan({ steps: [{ id: '../etc', task: 'sum' }] });
    expect(problems[0]?.field).toBe('steps[0].id');
  });

  describe('long chains (no recursion deep enough to overflow the stack)', () => {
    // The review's 8,000 steps overflowed the CLI's stack; a worker thread has more, so go further.
    const N = 100_000;
    // Each step depends on the one after it: the order runs backwards through the whole plan.
    const backwards = (cycle: boolean) => ({
      plan: {
        steps: Array.from({ length: N }, (_, i) => ({
          aiName: 'sum',
          draftArgs: { n: i },
          dependsOn: i < N - 1 ? [i + 1] : cycle ? [0] : [],
        })),
      },
    });

    it('orders a 100,000-step chain written backwards', () => {
      const { plan, problems } = validatePlan(backwards(false), checkers);
      expect(problems).toEqual([]);
      const order = topologicalOrder(plan).map((s) => s.id);
      expect(order).toHaveLength(N);
      expect(order[0]).toBe(String(N - 1));
      expect(order.at(-1)).toBe('0');
    });

    it('names a 100,000-step cycle in a short message', () => {
      const { problems } = validatePlan(backwards(true), checkers);
      expect(problems).toHaveLength(1);
      expect(problems[0]?.message).toMatch(/^cycle: 0 → 1 → .* → 19 → … 99980 more → 0$/);
    });
  });
});
