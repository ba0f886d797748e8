import { generateText, type ModelMessage, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/index.ts';
import { ManualClock } from '../time/index.ts';
import { compressConversationHistory } from './compress-history.ts';
import { createScriptedModel } from './scripted-model.ts';

const script = [
  { text: 'Checking.', toolCalls: [{ toolName: 'lookup', input: { id: 7 } }] },
  { text: 'Found it.' },
];

function afterTurns(n: number): ModelMessage[] {
  const history: ModelMessage[] = [{ role: 'user', content: 'go' }];
  for (let t = 1; t <= n; t++)
    history.push({ role: 'assistant', content: `turn ${t}` }, { role: 'user', content: 'more' });
  return history;
}

describe('createScriptedModel', () => {
  it('plays the turn that matches the conversation, even on a fresh instance', async () => {
    const model = createScriptedModel(script);
    const first = await generateText({ model, prompt: 'go' });
    expect(first.toolCalls).toEqual([
      expect.objectContaining({ toolCallId: 'call-1-1', toolName: 'lookup', input: { id: 7 } }),
    ]);
    expect(first.finishReason).toBe('tool-calls');
    const resumed = createScriptedModel(script);
    const second = await generateText({ model: resumed, messages: afterTurns(1) });
    expect(second.text).toBe('Found it.');
    expect(resumed.calls.map((c) => [c.turn, c.callIndex])).toEqual([[2, 0]]);
  });

  it('counts the turns a compression marker stands for', async () => {
    const model = createScriptedModel(({ turn }) => ({ text: `turn ${turn}` }));
    const compressed = compressConversationHistory(afterTurns(60)).messages;
    const { text } = await generateText({ model, messages: compressed });
    expect(text).toBe('turn 61');
  });

  it('takes its delay on the injected clock and honours the abort signal', async () => {
    const clock = new ManualClock(0);
    const model = createScriptedModel([{ text: 'slow', delayMs: 10_000 }], { clock });
    let done = false;
    const call = generateText({ model, prompt: 'x', maxRetries: 0 }).then((r) => {
      done = true;
      return r;
    });
    await clock.advance(9_999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect((await call).text).toBe('slow');

    const controller = new AbortController();
    const aborted = generateText({ model, prompt: 'x', maxRetries: 0, abortSignal: controller.signal });
    await clock.advance(1_000);
    controller.abort(new Error('deadline'));
    await expect(aborted).rejects.toThrow('deadline');
  });

  it('streams the same turn', async () => {
    const model = createScriptedModel(script);
    const result = streamText({ model, prompt: 'go' });
    expect(await result.text).toBe('Checking.');
    expect((await result.toolCalls).map((c) => c.toolName)).toEqual(['lookup']);
  });

  it('fails or repeats past the end of the script, as configured', async () => {
    await expect(
      generateText({ model: createScriptedModel(script), messages: afterTurns(2), maxRetries: 0 }),
    ).rejects.toThrow(/2 turns; the prompt asks for turn 3/);
    const repeating = createScriptedModel(script, { afterEnd: 'repeat-last' });
    expect((await generateText({ model: repeating, messages: afterTurns(5) })).text).toBe('Found it.');
  });

  it('rejects a bad script with errors that name the place', () => {
    expect(() => createScriptedModel([])).toThrow(ValidationError);
    expect(() => createScriptedModel([{ delayMs: 5 }])).toThrow(/options\.clock/);
    expect(() => createScriptedModel([{ text: 'a' }, { toolCalls: [{ toolName: '' }] }])).toThrow(
      /script\[1\]\.toolCalls\[0\]\.toolName/,
    );
    expect(() => createScriptedModel([{ delayMs: -1 }], { clock: new ManualClock(0) })).toThrow(
      /script\[0\]\.delayMs/,
    );
  });
});
