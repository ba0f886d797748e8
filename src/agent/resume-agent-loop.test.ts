import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import type { AgentEventWithTime } from './agent-events.ts';
import type { AgentLoopResult } from './agent-loop-result.ts';
import { type AgentTool, agentTool } from './agent-tools.ts';
import type { CheckpointState } from './checkpoint-state.ts';
import { readCompressionMarker } from './compress-history.ts';
import { analyzeToolPairing } from './conversation-exchanges.ts';
import type { AgentLoopOptions } from './loop-options.ts';
import { runAgentLoop } from './run-agent-loop.ts';
import { createScriptedModel, type ScriptContext, type ScriptedTurn } from './scripted-model.ts';

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

const search = agentTool({
  inputSchema: z.object({ q: z.string() }),
  execute: async ({ q }) => ({ hits: [q] }),
}) as AgentTool;

const calls = (n: number, turn: number) =>
  Array.from({ length: n }, (_, i) => ({ toolName: 'search', input: { q: `t${turn}-${i}` } }));

/**
 * One invocation as the engine would make it: a fresh model instance (a new process), the
 * checkpoint as the store gives it back (JSON), and the same prompt and system every time.
 */
function invoke(
  clock: ManualClock,
  script: (context: ScriptContext) => ScriptedTurn,
  resumeFrom: unknown,
  extra: Partial<AgentLoopOptions> = {},
) {
  const model = createScriptedModel(script, { clock });
  const saves: CheckpointState[] = [];
  const events: AgentEventWithTime[] = [];
  const run = drive(
    clock,
    runAgentLoop({
      model,
      clock,
      system: 'You are a battery analyst.',
      prompt: 'Provide comprehensive battery analysis',
      tools: { search },
      resumeFrom,
      onCheckpoint: async (state) => {
        saves.push(JSON.parse(JSON.stringify(state)));
      },
      onEvent: (e) => events.push(e),
      ...extra,
    }),
  );
  return { model, saves, events, run };
}

describe('runAgentLoop: resume', () => {
  // Turns 1–8 make 12 tool calls, turns 9–17 make 13 more, turn 18 answers (the protocol example).
  const protocolScript = ({ turn }: ScriptContext): ScriptedTurn => {
    if (turn === 18) return { text: 'Battery health is good.', delayMs: 3_000 };
    const n = turn <= 4 || (turn >= 9 && turn <= 12) ? 2 : 1;
    const delayMs = turn <= 7 ? 5_000 : turn === 8 ? 20_000 : 3_000;
    return { toolCalls: calls(n, turn), delayMs };
  };

  it('continues from the checkpoint: 8 + 10 = 18 turns, 12 + 13 = 25 tool calls', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let initialized = 0;
    const initialize = async () => {
      initialized += 1;
      return {
        messages: [{ role: 'user' as const, content: 'context: 30 days of readings' }],
        contextSummary: { days: 30 },
      };
    };
    const first = invoke(clock, protocolScript, undefined, { initialize });
    const timedOut = await first.run;
    expect(timedOut).toMatchObject({
      status: 'timeout',
      canResume: true,
      turns: 8,
      toolCalls: 12,
      durationMs: 55_000,
    });
    const stored = JSON.stringify(first.saves.at(-1));

    const second = invoke(clock, protocolScript, stored, { initialize });
    const done = await second.run;
    expect(done).toMatchObject({
      status: 'completed',
      text: 'Battery health is good.',
      turns: 18,
      toolCalls: 25,
      durationMs: 30_000,
      wasResumed: true,
    });
    expect(second.model.calls[0]?.turn).toBe(9);
    expect(initialized).toBe(1);
    expect(second.events[0]).toMatchObject({ type: 'agent:started', wasResumed: true, nextTurn: 9 });
    expect(done.state.elapsedMs).toBe(85_000);
    expect(done.state.contextSummary).toEqual({ days: 30 });
    const users = done.state.conversationHistory.filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual([
      'Provide comprehensive battery analysis',
      'context: 30 days of readings',
    ]);
    expect(analyzeToolPairing(done.state.conversationHistory).danglingCalls).toEqual([]);
  });

  it('resumes several times in a row, adding up turns, tool calls and elapsed time', async () => {
    const clock = new ManualClock(0);
    const script = ({ turn }: ScriptContext): ScriptedTurn =>
      turn <= 20 ? { toolCalls: calls(1, turn), delayMs: 7_000 } : { text: 'final report', delayMs: 7_000 };
    const results: AgentLoopResult[] = [];
    let checkpoint: unknown;
    for (let i = 0; i < 3; i++) {
      const attempt = invoke(clock, script, checkpoint);
      const result = await attempt.run;
      results.push(result);
      checkpoint = attempt.saves.at(-1);
      expect(attempt.model.calls[0]?.turn).toBe(i * 8 + 1);
    }
    expect(results.map((r) => r.status)).toEqual(['timeout', 'timeout', 'completed']);
    expect(results.map((r) => [r.turns, r.toolCalls, r.wasResumed])).toEqual([
      [8, 8, false],
      [16, 16, true],
      [21, 20, true],
    ]);
    expect(results.map((r) => r.state.elapsedMs)).toEqual([56_000, 112_000, 147_000]);
  });

  it('returns the answer a final checkpoint already holds, without another model call or save', async () => {
    // The 'final' save committed but the run did not (its deadline or lease ran out in between):
    // the resume must not make an 11th turn out of a 10-turn job (protocol 003: a completed job
    // returns its cached results).
    const clock = new ManualClock(0);
    const script = ({ turn }: ScriptContext): ScriptedTurn =>
      turn < 3 ? { toolCalls: calls(1, turn), delayMs: 1_000 } : { text: 'three turns', delayMs: 1_000 };
    const first = invoke(clock, script, undefined);
    expect(await first.run).toMatchObject({ status: 'completed', turns: 3, toolCalls: 2 });
    const final = JSON.stringify(first.saves.at(-1));

    const again = invoke(clock, script, final);
    const result = await again.run;
    expect(result).toMatchObject({
      status: 'completed',
      stopReason: 'final_answer',
      text: 'three turns',
      turns: 3,
      toolCalls: 2,
      wasResumed: true,
    });
    expect(again.model.calls).toEqual([]);
    expect(again.saves).toEqual([]);
    expect(result.state).toEqual(JSON.parse(final));
    expect(again.events.map((e) => e.type)).toEqual(['agent:started', 'agent:completed']);

    // A checkpoint whose last turn called a tool still has turns to make.
    const midway = first.saves.find((s) => s.turnCount === 2);
    if (midway) {
      const next = invoke(clock, script, midway);
      expect(await next.run).toMatchObject({ turns: 3, text: 'three turns' });
      expect(next.model.calls.map((c) => c.turn)).toEqual([3]);
    }
  });

  it('starts fresh from the prompt when the checkpoint is corrupt, and says so', async () => {
    const clock = new ManualClock(0);
    const script = ({ turn }: ScriptContext): ScriptedTurn =>
      turn === 1 ? { toolCalls: calls(1, 1) } : { text: 'ok' };
    for (const [bad, field] of [
      ['{"conversationHistory": [', 'state'],
      [
        {
          conversationHistory: [],
          turnCount: 3,
          toolCallCount: 1,
          contextSummary: {},
          elapsedMs: 1,
          checkpointedAt: '2026-01-01T00:00:00Z',
          version: '2.0',
        },
        'version',
      ],
      [
        {
          // A message the AI SDK would refuse (a text part's text is a number): before, the first
          // model call failed the job with the SDK's InvalidPromptError instead of starting fresh.
          conversationHistory: [
            { role: 'user', content: 'Provide comprehensive battery analysis' },
            { role: 'user', content: [{ type: 'text', text: 42 }] },
          ],
          turnCount: 0,
          toolCallCount: 0,
          contextSummary: {},
          elapsedMs: 1,
          checkpointedAt: '2026-01-01T00:00:00Z',
          version: '1.0',
        },
        'conversationHistory[1]',
      ],
    ] as const) {
      const attempt = invoke(clock, script, bad);
      const result = await attempt.run;
      expect(result).toMatchObject({
        status: 'completed',
        wasResumed: false,
        turns: 2,
        checkpointRejected: { field },
      });
      expect(attempt.model.calls[0]?.turn).toBe(1);
      expect(attempt.events[0]).toMatchObject({ type: 'checkpoint:rejected', field });
    }
  });

  it('cannot start fresh without a prompt when the checkpoint is unusable', async () => {
    const clock = new ManualClock(0);
    const err = await runAgentLoop({
      model: createScriptedModel([{ text: 'x' }]),
      clock,
      resumeFrom: 'garbage',
      onCheckpoint: async () => {},
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).message).toMatch(/checkpoint is unusable/);
  });

  it('resumes a newer minor version with a warning event', async () => {
    const clock = new ManualClock(0);
    const first = invoke(clock, () => ({ text: 'done' }), undefined);
    const saved = { ...(await first.run).state, version: '1.4' };
    const second = invoke(clock, () => ({ text: 'again' }), saved);
    // The saved job had already answered: the answer comes back, with no second model call.
    expect(await second.run).toMatchObject({ wasResumed: true, turns: 1, text: 'done' });
    expect(second.model.calls).toEqual([]);
    expect(second.events[0]).toMatchObject({ type: 'checkpoint:warning' });
  });

  it('compresses a long history before saving and resumes at the right turn from it', async () => {
    const clock = new ManualClock(0);
    const script = ({ turn }: ScriptContext): ScriptedTurn =>
      turn <= 60 ? { toolCalls: calls(1, turn) } : { text: `answer at turn ${turn}`, delayMs: 100_000 };
    const first = invoke(clock, script, undefined);
    const timedOut = await first.run;
    expect(timedOut).toMatchObject({
      status: 'timeout',
      reason: 'budget_exceeded',
      turns: 60,
      toolCalls: 60,
    });
    const saved = timedOut.state.conversationHistory;
    expect(saved).toHaveLength(9 + 1 + 40); // prompt + 4 turns, the marker, 20 turns
    expect(readCompressionMarker(saved[9])).toMatchObject({
      omittedTurns: 36,
      firstOmittedTurn: 5,
      lastOmittedTurn: 40,
    });
    expect(first.events.some((e) => e.type === 'history:compressed')).toBe(true);

    const second = invoke(clock, ({ turn }) => ({ text: `answer at turn ${turn}` }), timedOut.state);
    expect(await second.run).toMatchObject({ status: 'completed', text: 'answer at turn 61', turns: 61 });
  });
  it('counts time spent before the call (loading the checkpoint) against this invocation', async () => {
    const clock = new ManualClock(0);
    // One turn that called a tool, then stopped by maxTurns: a checkpoint with turns still to make.
    const first = invoke(clock, () => ({ toolCalls: calls(1, 1) }), undefined, { maxTurns: 1 });
    const saved = (await first.run).state;
    await clock.advance(50_000);
    const slowTurns = () => ({ toolCalls: calls(1, 0), delayMs: 2_000 });
    const second = invoke(clock, slowTurns, saved, { invocationStartedAt: clock.monotonic() - 50_000 });
    // 10 s were left at the call: three 2 s turns after the 1 saved one, then the 5 s margin.
    expect(await second.run).toMatchObject({
      status: 'timeout',
      reason: 'pre_timeout',
      turns: 4,
      durationMs: 56_000,
    });
    expect(second.events[0]).toMatchObject({ type: 'agent:started', elapsedMs: 50_000 });
  });

  it('fails with TIMEOUT and saves nothing when initialize outlasts the budget', async () => {
    const clock = new ManualClock(0);
    const attempt = invoke(clock, () => ({ text: 'x' }), undefined, {
      initialize: async ({ signal }) => {
        await clock.sleep(90_000, signal);
        return undefined;
      },
    });
    await expect(attempt.run).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringMatching(/initialize/),
    });
    expect(attempt.saves).toEqual([]);
  });
});
