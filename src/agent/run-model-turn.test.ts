import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock } from '../time/index.ts';
import { type AgentTool, agentTool, toSdkTools } from './agent-tools.ts';
import { runAgentLoop } from './run-agent-loop.ts';
import { runModelTurn } from './run-model-turn.ts';
import { createScriptedModel, type ScriptContext, type ScriptedTurn } from './scripted-model.ts';

const search = agentTool({
  inputSchema: z.object({ q: z.string() }),
  execute: async ({ q }) => ({ hits: [q] }),
}) as AgentTool;

// A user message the SDK's schema rejects (a text part's text must be a string) but that still
// converts for the model, so a test can see whether the SDK checked it.
const malformed = { role: 'user', content: [{ type: 'text', text: 42 }] } as unknown as ModelMessage;
const fine: ModelMessage = { role: 'user', content: 'Analyse the battery' };

function turn(history: ModelMessage[], validated: number) {
  const model = createScriptedModel([{ text: 'ok' }]);
  return runModelTurn({
    options: { model, clock: new ManualClock(0), onCheckpoint: async () => {} },
    history,
    validated,
    tools: toSdkTools({ search }),
    signal: new AbortController().signal,
    maxRetries: 0,
  }).then((reply) => ({ reply, prompt: model.calls[0]?.prompt }));
}

describe('runModelTurn: what the SDK checks', () => {
  it('has the SDK check only the messages added since the last call, and sends the model all of them', async () => {
    // Checked before: not checked again, and still sent.
    const { reply, prompt } = await turn([malformed, fine], 1);
    expect(reply.text).toBe('ok');
    expect(prompt?.filter((m) => m.role === 'user')).toHaveLength(2);
    // New since the last call: checked as always.
    await expect(turn([fine, malformed], 1)).rejects.toMatchObject({ name: 'AI_InvalidPromptError' });
    // Nothing checked yet (a fresh or resumed invocation): all of it is checked.
    await expect(turn([malformed, fine], 0)).rejects.toMatchObject({ name: 'AI_InvalidPromptError' });
  });

  it('sends the whole conversation on every turn of a loop, across a resume', async () => {
    const clock = new ManualClock(0);
    const script = ({ turn: n }: ScriptContext): ScriptedTurn =>
      n < 6
        ? { toolCalls: [{ toolName: 'search', input: { q: `t${n}` } }], delayMs: 1_000 }
        : { text: 'done' };
    const first = createScriptedModel(script, { clock });
    const run = runAgentLoop({
      model: first,
      clock,
      prompt: 'Analyse the battery',
      tools: { search },
      timeoutMs: 10_000,
      checkpointBeforeDeadlineMs: 6_500,
      onCheckpoint: async () => {},
    });
    for (let i = 0; i < 20; i++) await clock.advance(500);
    const parked = await run;
    // Turns end at 1, 2, 3 and 4 s; then 6 s are left, within the 6.5 s margin.
    expect(parked).toMatchObject({ status: 'timeout', turns: 4 });
    // Turn n's prompt: the user's message, then n - 1 assistant messages, each with its tool message.
    expect(first.calls.map((c) => c.prompt.length)).toEqual([1, 3, 5, 7]);

    const second = createScriptedModel(script, { clock });
    const resumed = runAgentLoop({
      model: second,
      clock,
      prompt: 'Analyse the battery',
      tools: { search },
      resumeFrom: JSON.parse(JSON.stringify(parked.state)),
      onCheckpoint: async () => {},
    });
    for (let i = 0; i < 20; i++) await clock.advance(500);
    const done = await resumed;
    expect(done).toMatchObject({ status: 'completed', turns: 6, text: 'done' });
    expect(second.calls.map((c) => c.prompt.length)).toEqual([9, 11]);
  });
});
