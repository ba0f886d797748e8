import { describe, expect, it } from 'vitest';
import { decideFlow, type FlowStepState } from './flow-progress.ts';
import { canTransition, isTerminal } from './run-state.ts';

const s = (stepId: string, status: FlowStepState['status'], dependsOn: string[] = []): FlowStepState => ({
  stepId,
  status,
  waitReason: status === 'waiting' ? 'dependency' : null,
  dependsOn,
});

describe('flow progress', () => {
  it('readies a step only when all its dependencies are usable', () => {
    const d = decideFlow([
      s('a', 'succeeded'),
      s('b', 'running'),
      s('c', 'waiting', ['a']),
      s('d', 'waiting', ['a', 'b']),
    ]);
    expect(d.ready).toEqual(['c']);
    expect(d.finished).toBeUndefined();
  });

  it('treats partial output as usable and marks the flow partial', () => {
    const d = decideFlow([s('a', 'partial'), s('b', 'succeeded', ['a'])]);
    expect(d.finished).toEqual({ status: 'partial', incomplete: ['a'] });
  });

  it('blocks down a chain and fails the flow once everything ended', () => {
    const d = decideFlow([
      s('a', 'failed'),
      s('b', 'waiting', ['a']),
      s('c', 'waiting', ['b']),
      s('x', 'succeeded'),
    ]);
    expect(d.blocked.map((b) => [b.stepId, b.dependency])).toEqual([
      ['b', 'a'],
      ['c', 'b'],
    ]);
    expect(d.finished?.status).toBe('failed');
  });

  it('does not wait on a step that waits for something else than dependencies', () => {
    const d = decideFlow([s('a', 'succeeded'), { ...s('b', 'waiting', ['a']), waitReason: 'timer' }]);
    expect(d.ready).toEqual([]);
    expect(d.finished).toBeUndefined();
  });
});

describe('run state machine', () => {
  it('allows the lifecycle and forbids leaving success', () => {
    expect(canTransition('queued', 'running')).toBe(true);
    expect(canTransition('running', 'waiting')).toBe(true);
    expect(canTransition('waiting', 'queued')).toBe(true);
    expect(canTransition('failed', 'queued')).toBe(true);
    expect(canTransition('succeeded', 'queued')).toBe(false);
    expect(canTransition('queued', 'succeeded')).toBe(false);
    expect(isTerminal('partial')).toBe(true);
    expect(isTerminal('waiting')).toBe(false);
  });
});

describe('flow progress with scheduled deliveries', () => {
  it('starts a dependent once its upstream finished executing, even while that delivery is held', () => {
    const d = decideFlow([{ ...s('a', 'waiting'), waitReason: 'delivery' }, s('b', 'waiting', ['a'])]);
    expect(d.ready).toEqual(['b']);
    expect(d.finished).toBeUndefined();
  });

  it('blocks an 8,000-step chain written backwards when the step they all wait on fails', () => {
    const N = 8_000;
    const steps: FlowStepState[] = Array.from({ length: N }, (_, i) => ({
      stepId: String(i),
      status: i === N - 1 ? 'failed' : 'waiting',
      waitReason: i === N - 1 ? null : 'dependency',
      dependsOn: i < N - 1 ? [String(i + 1)] : [],
    }));
    const d = decideFlow(steps);
    expect(d.blocked).toHaveLength(N - 1);
    expect(d.blocked[0]).toEqual({
      stepId: String(N - 2),
      dependency: String(N - 1),
      dependencyStatus: 'failed',
    });
    expect(d.finished).toEqual({ status: 'failed', incomplete: [] });
  });
});
