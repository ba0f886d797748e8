import type { ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BatonError, ValidationError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import type { AgentEventWithTime, CheckpointReason } from './agent-events.ts';
import { AgentLoopError } from './agent-loop-error.ts';
import { ABORTED_TOOL_MESSAGE, type AgentTool, agentTool } from './agent-tools.ts';
import type { CheckpointState } from './checkpoint-state.ts';
import { analyzeToolPairing } from './conversation-exchanges.ts';
import type { AgentLoopOptions } from './loop-options.ts';
import { runAgentLoop } from './run-agent-loop.ts';
import { createScriptedModel, type ScriptedTurn } from './scripted-model.ts';

/** Moves the manual clock until the run settles (timers fire at their exact due times). */
async function drive<T>(clock: ManualClock, run: Promise<T>): Promise<T> {
  let settled = false;
  run.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; !settled; i++) {
    if (i > 10_000) throw new Error('the loop did not settle');
    await clock.advance(500);
  }
  return run;
}

function harness(script: ScriptedTurn[], extra: Partial<AgentLoopOptions> = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const model = createScriptedModel(script, { clock });
  const saves: Array<{ reason: CheckpointReason; state: CheckpointState; at: number }> = [];
  const events: AgentEventWithTime[] = [];
  const executed: string[] = [];
  const search = agentTool({
    description: 'search the web',
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }) => {
      executed.push(q);
      return { hits: [`result for ${q}`] };
    },
  });
  const options: AgentLoopOptions = {
    model,
    clock,
    prompt: 'research the topic',
    tools: { search: search as AgentTool },
    onCheckpoint: async (state, reason) => {
      saves.push({ reason, state, at: clock.monotonic() });
    },
    onEvent: (e) => events.push(e),
    ...extra,
  };
  return { clock, model, saves, events, executed, options, run: () => drive(clock, runAgentLoop(options)) };
}

const searchTurn = (q: string, delayMs = 0): ScriptedTurn => ({
  delayMs,
  toolCalls: [{ toolName: 'search', input: { q } }],
});

function expectConsistent(history: readonly ModelMessage[]): void {
  const pairing = analyzeToolPairing(history);
  expect(pairing.danglingCalls).toEqual([]);
  expect(pairing.orphanResults).toEqual([]);
}

describe('runAgentLoop: a fresh request', () => {
  it('runs tool turns, feeds results back and completes with the answer', async () => {
    const h = harness([
      {
        text: 'Let me look.',
        toolCalls: [
          { toolName: 'search', input: { q: 'a' } },
          { toolName: 'search', input: { q: 'b' } },
        ],
        delayMs: 2_000,
      },
      { ...searchTurn('c'), delayMs: 3_000 },
      { text: 'The answer is 42.', delayMs: 1_000 },
    ]);
    const result = await h.run();
    expect(result).toMatchObject({
      status: 'completed',
      stopReason: 'final_answer',
      text: 'The answer is 42.',
    });
    expect(result).toMatchObject({ turns: 3, toolCalls: 3, durationMs: 6_000, wasResumed: false });
    expect(h.executed).toEqual(['a', 'b', 'c']);
    expect(h.saves.map((s) => s.reason)).toEqual(['final']);
    expect(h.saves[0]?.state).toEqual(result.state);
    expect(result.state.conversationHistory.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expectConsistent(result.state.conversationHistory);
    // The second model call saw both results of the first turn.
    expect(JSON.stringify(h.model.calls[1]?.prompt)).toContain('result for b');
    expect(h.events.map((e) => e.type)).toEqual([
      'agent:started',
      'turn:started',
      'tool:called',
      'tool:called',
      'tool:completed',
      'tool:completed',
      'turn:completed',
      'turn:started',
      'tool:called',
      'tool:completed',
      'turn:completed',
      'turn:started',
      'turn:completed',
      'checkpoint:saved',
      'agent:completed',
    ]);
  });

  it('works with the AI SDK mock model as well', async () => {
    const clock = new ManualClock(0);
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'search', input: '{"q":"mock"}' }],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await runAgentLoop({
      model,
      clock,
      messages: [{ role: 'user', content: 'hi' }],
      tools: {
        search: { inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, execute: (i) => i },
      },
      onCheckpoint: async () => {},
    });
    expect(result).toMatchObject({ status: 'completed', text: 'done', turns: 2, toolCalls: 1 });
    expect(model.doGenerateCalls).toHaveLength(2);
  });

  it('answers failing, unknown and invalid tool calls with error results and carries on', async () => {
    const h = harness([
      {
        toolCalls: [
          { toolName: 'search', input: { q: 'boom' } },
          { toolName: 'teleport', input: {} },
          { toolName: 'search', input: { q: 7 } },
        ],
      },
      { text: 'Recovered.' },
    ]);
    h.options.tools = {
      search: agentTool({
        inputSchema: z.object({ q: z.string() }),
        execute: async () => {
          throw new Error('search backend down');
        },
      }) as AgentTool,
    };
    const result = await h.run();
    expect(result).toMatchObject({ status: 'completed', text: 'Recovered.', toolCalls: 3 });
    const toolMessage = result.state.conversationHistory[2];
    expect(toolMessage?.role).toBe('tool');
    const parts = (toolMessage?.content ?? []) as Array<{ output: { type: string; value: string } }>;
    const outputs = parts.map((p) => p.output);
    expect(outputs.map((o) => o.type)).toEqual(['error-text', 'error-text', 'error-text']);
    expect(outputs[0]?.value).toBe('search backend down');
    expect(outputs[1]?.value).toMatch(/teleport/);
    expect(outputs[2]?.value).toMatch(/Invalid input/);
    expect(h.events.filter((e) => e.type === 'tool:failed')).toHaveLength(3);
  });

  it('stops at maxTurns with the last text it had', async () => {
    const digging = (i: number): ScriptedTurn => ({ text: `still digging ${i}`, ...searchTurn(`q${i}`) });
    const h = harness([1, 2, 3, 4, 5].map(digging), { maxTurns: 3 });
    const result = await h.run();
    expect(result).toMatchObject({
      status: 'completed',
      stopReason: 'max_turns',
      turns: 3,
      text: 'still digging 3',
    });
    expect(h.model.calls).toHaveLength(3);
    expect(h.saves.map((s) => s.reason)).toEqual(['final']);
  });
});

describe('runAgentLoop: checkpoints and the deadline', () => {
  it('saves a periodic checkpoint every 5 turns', async () => {
    const h = harness([
      ...Array.from({ length: 12 }, (_, i) => searchTurn(`q${i}`, 1_000)),
      { text: 'done' },
    ]);
    const result = await h.run();
    expect(h.saves.map((s) => [s.reason, s.state.turnCount])).toEqual([
      ['periodic', 5],
      ['periodic', 10],
      ['final', 13],
    ]);
    expect(h.saves[0]?.at).toBe(5_000);
    expect(h.saves[0]?.state.conversationHistory).toHaveLength(11);
    expect(result.turns).toBe(13);
  });

  it('checkpoints at 55 s of 60 s and stops with a resumable timeout', async () => {
    const h = harness([
      ...Array.from({ length: 7 }, (_, i) => searchTurn(`q${i}`, 11_000)),
      { text: 'done' },
    ]);
    const result = await h.run();
    expect(result).toMatchObject({
      status: 'timeout',
      canResume: true,
      reason: 'pre_timeout',
      timeoutMs: 60_000,
    });
    expect(result).toMatchObject({ turns: 5, toolCalls: 5, durationMs: 55_000 });
    // Turn 5 was in flight at 55 s: the last consistent state (turn 4) was saved at once, then turn 5's.
    expect(h.saves.map((s) => [s.reason, s.state.turnCount, s.at])).toEqual([
      ['pre_timeout', 4, 55_000],
      ['pre_timeout', 5, 55_000],
    ]);
    expect(h.model.calls).toHaveLength(5);
    expect(result.state).toEqual(h.saves[1]?.state);
    expect(result.state.elapsedMs).toBe(55_000);
    expect(result.state.checkpointedAt).toBe('2026-01-01T00:00:55.000Z');
  });

  it('aborts a model call that overruns the hard deadline and saves the last consistent state', async () => {
    const h = harness([
      ...Array.from({ length: 6 }, (_, i) => searchTurn(`q${i}`, 9_000)),
      { text: 'late', delayMs: 30_000 },
    ]);
    const result = await h.run();
    expect(result).toMatchObject({
      status: 'timeout',
      reason: 'budget_exceeded',
      turns: 6,
      toolCalls: 6,
      durationMs: 60_000,
    });
    expect(h.saves.map((s) => [s.reason, s.state.turnCount, s.at])).toEqual([
      ['periodic', 5, 45_000],
      ['pre_timeout', 6, 55_000],
      ['budget_exceeded', 6, 60_000],
    ]);
    expect(h.events.find((e) => e.type === 'turn:aborted')).toMatchObject({ turn: 7, elapsedMs: 60_000 });
    expect(result.state.conversationHistory.at(-1)?.role).toBe('tool');
    expectConsistent(result.state.conversationHistory);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it('returns at the deadline even when the model ignores the abort signal', async () => {
    const h = harness([searchTurn('a'), { text: 'never', delayMs: 500_000, ignoreAbort: true }]);
    const result = await drive(h.clock, runAgentLoop(h.options));
    expect(result).toMatchObject({
      status: 'timeout',
      reason: 'budget_exceeded',
      turns: 1,
      durationMs: 60_000,
    });
  });

  it('aborts a tool that overruns and records it as an aborted result, never a dangling call', async () => {
    const h = harness([
      {
        toolCalls: [
          { toolName: 'search', input: { q: 'fast' } },
          { toolName: 'slow', input: {} },
        ],
      },
    ]);
    let toolSignal: AbortSignal | undefined;
    h.options.tools = {
      ...h.options.tools,
      slow: {
        inputSchema: { type: 'object' },
        execute: async (_i, { signal }) => {
          toolSignal = signal;
          await h.clock.sleep(120_000, signal);
        },
      },
    };
    const result = await h.run();
    expect(result).toMatchObject({ status: 'timeout', reason: 'budget_exceeded', turns: 1, toolCalls: 2 });
    expect(toolSignal?.aborted).toBe(true);
    const results = result.state.conversationHistory[2]?.content as Array<{ output: { value: unknown } }>;
    expect(results[0]?.output.value).toEqual({ hits: ['result for fast'] });
    expect(results[1]?.output.value).toBe(ABORTED_TOOL_MESSAGE);
    expectConsistent(result.state.conversationHistory);
    expect(h.events.find((e) => e.type === 'tool:failed')).toMatchObject({ toolName: 'slow', aborted: true });
  });

  it('never runs two saves at once and keeps them in order', async () => {
    let active = 0;
    let maxActive = 0;
    const h = harness([...Array.from({ length: 7 }, (_, i) => searchTurn(`q${i}`, 11_000))]);
    const order: number[] = [];
    h.options.onCheckpoint = async (state) => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      await h.clock.sleep(2_000);
      order.push(state.turnCount);
      active -= 1;
    };
    const result = await h.run();
    expect(maxActive).toBe(1);
    expect(order).toEqual([4, 5]);
    expect(result.durationMs).toBe(59_000);
  });

  it('stops with the store error when a checkpoint cannot be saved', async () => {
    const h = harness(Array.from({ length: 8 }, (_, i) => searchTurn(`q${i}`, 1_000)));
    h.options.onCheckpoint = async () => {
      throw new BatonError('LEASE_LOST', 'another worker owns this run');
    };
    await expect(h.run()).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(h.model.calls).toHaveLength(5);
  });

  it('throws CANCELLED with the last consistent state when the caller aborts', async () => {
    const controller = new AbortController();
    const h = harness(
      Array.from({ length: 8 }, (_, i) => searchTurn(`q${i}`, 10_000)),
      { signal: controller.signal },
    );
    h.clock.setTimer(25_000, () => controller.abort());
    const err = await h.run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentLoopError);
    expect((err as AgentLoopError).code).toBe('CANCELLED');
    expect((err as AgentLoopError).state?.turnCount).toBe(2);
    expectConsistent((err as AgentLoopError).state?.conversationHistory ?? []);
  });

  it('wraps a failed model call in TASK_FAILED with the state to keep', async () => {
    const h = harness([searchTurn('a'), { error: 'provider returned 500' }]);
    const err = await h.run().catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'TASK_FAILED',
      message: expect.stringContaining('provider returned 500'),
    });
    expect((err as AgentLoopError).state?.turnCount).toBe(1);
  });

  it('rejects invalid options with errors that name the field', async () => {
    const h = harness([{ text: 'x' }]);
    const cases: Array<[Partial<AgentLoopOptions>, string]> = [
      [{ timeoutMs: 0 }, 'timeoutMs'],
      [{ timeoutMs: 5_000, checkpointBeforeDeadlineMs: 5_000 }, 'checkpointBeforeDeadlineMs'],
      [{ checkpointEveryTurns: -1 }, 'checkpointEveryTurns'],
      [{ maxTurns: 0 }, 'maxTurns'],
      [{ compression: { keepLast: -1 } }, 'compression.keepLast'],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'prompt'],
      [{ tools: { t: { inputSchema: {} } as AgentTool } }, 'tools.t.execute'],
    ];
    for (const [patch, field] of cases) {
      const err = await runAgentLoop({ ...h.options, ...patch }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
  });
});
