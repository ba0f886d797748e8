/** The pure mapping of a run to an MCP task: status words, status line, the question's form. */
import { describe, expect, it } from 'vitest';
import type { OpenDecision } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import { decisionForm, summarizeCheckpoint, taskOf, taskStatusOf } from './run-tasks.ts';

const run = (over: Partial<RunRecord> = {}): RunRecord => ({
  id: 'run_1',
  parentId: null,
  rootId: 'run_1',
  stepId: null,
  kind: 'task',
  name: 'research',
  input: {},
  status: 'running',
  waitReason: null,
  wakeAt: null,
  attempt: 1,
  dependsOn: [],
  priority: 0,
  createdAt: Date.UTC(2026, 0, 1),
  startedAt: null,
  finishedAt: null,
  updatedAt: Date.UTC(2026, 0, 1, 0, 1),
  budgetMs: null,
  deadlineAt: null,
  output: null,
  error: null,
  leaseOwner: null,
  leaseExpiresAt: null,
  leaseToken: 1,
  source: null,
  options: {},
  meta: {},
  expiresAt: null,
  ...over,
});

const question: OpenDecision = {
  runId: 'run_1',
  stepId: null,
  request: {
    menu: 'research' as OpenDecision['request']['menu'],
    attempts: 2,
    timeoutMs: 1000,
    totalMs: 2000,
    findings: 1,
    otherModes: ['fast'],
    choices: [
      { id: 'continue_partial', label: 'Continue with partial results' },
      { id: 'different_mode', label: 'Try a different mode' },
    ],
    message: 'Research agent failed after 2 attempts.',
  },
};

describe('runs as MCP tasks', () => {
  it('maps every run status to MCP’s five task statuses', () => {
    expect(taskStatusOf(run({ status: 'queued' }), [])).toBe('working');
    expect(taskStatusOf(run({ status: 'waiting', waitReason: 'timer' }), [])).toBe('working');
    expect(taskStatusOf(run({ status: 'waiting', waitReason: 'decision' }), [question])).toBe(
      'input_required',
    );
    expect(taskStatusOf(run({ status: 'succeeded' }), [])).toBe('completed');
    expect(taskStatusOf(run({ status: 'partial' }), [])).toBe('completed');
    expect(taskStatusOf(run({ status: 'failed' }), [])).toBe('failed');
    expect(taskStatusOf(run({ status: 'expired' }), [])).toBe('failed');
    expect(taskStatusOf(run({ status: 'cancelled' }), [])).toBe('cancelled');
  });

  it('reads the checkpoint document without trusting its shape', () => {
    expect(summarizeCheckpoint(undefined)).toEqual({});
    expect(
      summarizeCheckpoint({ progress_percentage: 'lots', time_assessment: null, items_analyzed: Number.NaN }),
    ).toEqual({});
    expect(
      summarizeCheckpoint({
        progress_percentage: 50,
        items_analyzed: 2,
        time_assessment: { time_status: 'warning', remaining_seconds: 42 },
      }),
    ).toEqual({ progressPercentage: 50, itemsAnalyzed: 2, timeStatus: 'warning', remainingSeconds: 42 });
  });

  it('says how the run is doing; the TTL is known once the run ended', () => {
    const working = taskOf({
      run: run(),
      decisions: [],
      checkpoint: {
        progress_percentage: 50,
        items_analyzed: 2,
        time_assessment: { time_status: 'on_track' },
      },
      findings: 2,
      pollIntervalMs: 500,
    });
    expect(working).toEqual({
      taskId: 'run_1',
      status: 'working',
      ttl: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:01:00.000Z',
      pollInterval: 500,
      statusMessage: 'running, attempt 1, 50% done, 2 items, 2 finding(s), on_track',
    });
    const ended = taskOf({
      run: run({
        status: 'failed',
        error: { name: 'BatonError', code: 'TIMEOUT', message: 'too slow' },
        expiresAt: Date.UTC(2026, 0, 8),
      }),
      decisions: [],
      checkpoint: undefined,
      findings: 0,
      pollIntervalMs: 500,
    });
    expect(ended.ttl).toBe(7 * 86_400_000);
    expect(ended.statusMessage).toBe('research failed: TIMEOUT: too slow');
  });

  it('offers the menu as a single-select field, and the modes when "different mode" is a choice', () => {
    const form = decisionForm(question);
    expect(form.message).toBe('Research agent failed after 2 attempts.');
    expect(form.requestedSchema.required).toEqual(['choice']);
    expect(form.requestedSchema.properties.choice?.oneOf).toEqual([
      { const: 'continue_partial', title: 'Continue with partial results' },
      { const: 'different_mode', title: 'Try a different mode' },
    ]);
    expect(form.requestedSchema.properties.mode?.oneOf).toEqual([{ const: 'fast', title: 'fast' }]);
    const plain = decisionForm({
      ...question,
      request: { ...question.request, choices: [question.request.choices[0]!] },
    });
    expect(plain.requestedSchema.properties.mode).toBeUndefined();
  });
});
