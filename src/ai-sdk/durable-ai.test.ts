/**
 * baton/ai offline, with the AI SDK's mock models on a real SQLite file and a manual clock: model
 * calls memoized across a failed attempt (generate and stream), tool calls under growing timeouts
 * with partial results, and the UI message stream served again from Last-Event-ID without
 * duplicates after a retried attempt replayed it.
 */
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTask } from '../runtime/index.ts';
import { advanceUntil, type TestRuntime, testRuntime } from '../testing/index.ts';
import { durableModel, durableTools, recordUiStream, uiMessageStreamResponse } from './index.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const USAGE: GenerateResult['usage'] = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};
const text = (t: string): GenerateResult => ({
  content: [{ type: 'text', text: t }],
  finishReason: { unified: 'stop', raw: undefined },
  usage: USAGE,
  warnings: [],
});
const toolCall = (id: string, name: string, input: unknown): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage: USAGE,
  warnings: [],
});
function streamOf(words: string[]): ReadableStream<StreamPart> {
  const parts: StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'resp-1', modelId: 'mock', timestamp: new Date(0) },
    { type: 'text-start', id: 't1' },
    ...words.map((w) => ({ type: 'text-delta' as const, id: 't1', delta: w })),
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: USAGE },
  ];
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p);
      c.close();
    },
  });
}

let rt: TestRuntime;
afterEach(async () => rt?.dispose());

/** Runs a task whose first attempt fails after its model calls; the retry must not call again. */
async function twoAttempts<O>(
  run: (ctx: Parameters<Parameters<typeof defineTask>[0]['run']>[1]) => Promise<O>,
) {
  rt = testRuntime();
  const task = defineTask({
    name: 'agent',
    retry: { maxRetries: 1, backoff: ['1s'] },
    run: async (_: unknown, ctx) => {
      const out = await run(ctx);
      if (ctx.attempt === 1) throw new Error('crash after the model calls');
      return out;
    },
  });
  const handle = await rt.baton.start(task, {});
  await advanceUntil(rt.clock, async () => (await rt.baton.getRun(handle.id))?.status === 'succeeded', {
    stepMs: 500,
  });
  return (await rt.baton.getRun(handle.id))?.output as O;
}

describe('durableModel', () => {
  it('memoizes generate calls by content: the retry pays for no completion twice', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => text(`answer to ${JSON.stringify(prompt).length}`),
    });
    const out = await twoAttempts(async (ctx) => {
      const m = durableModel(model, ctx);
      const a = await generateText({ model: m, prompt: 'first question' });
      const b = await generateText({ model: m, prompt: 'second question' });
      const again = await generateText({ model: m, prompt: 'first question' }); // same content, 2nd time
      return [a.text, b.text, again.text];
    });
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(out).toHaveLength(3);
    const keys = (await rt.store.getSteps((await rt.baton.listRuns())[0]?.id as string)).map((s) => s.key);
    expect(keys.filter((k) => k.startsWith('ai:model:generate:'))).toHaveLength(3);
    expect(keys.some((k) => k.endsWith(':1'))).toBe(true); // the repeated call got its own slot
  });

  it('memoizes a stream and replays it as a stream', async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: streamOf(['Dur', 'able', '!']) }),
    });
    const out = await twoAttempts(async (ctx) => {
      const r = streamText({ model: durableModel(model, ctx), prompt: 'say it' });
      const chunks: string[] = [];
      for await (const t of r.textStream) chunks.push(t);
      return { chunks, meta: (await r.response).id };
    });
    expect(model.doStreamCalls).toHaveLength(1);
    expect(out).toEqual({ chunks: ['Dur', 'able', '!'], meta: 'resp-1' });
  });

  it('a call with different content reaches the model', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => text('ok') });
    await twoAttempts(
      async (ctx) =>
        (await generateText({ model: durableModel(model, ctx), prompt: `attempt ${ctx.attempt}` })).text,
    );
    expect(model.doGenerateCalls).toHaveLength(2);
  });
});

describe('durableTools', () => {
  it('runs a finished tool call once across attempts (keyed by its call id)', async () => {
    let executions = 0;
    const model = new MockLanguageModelV3({
      doGenerate: [toolCall('call-1', 'lookup', { q: 'battery' }), text('done')],
    });
    const replies = [toolCall('call-1', 'lookup', { q: 'battery' }), text('done')];
    let i = 0;
    model.doGenerate = async () => replies[i++ % 2] as GenerateResult;
    const out = await twoAttempts(async (ctx) => {
      const tools = durableTools(ctx, {
        lookup: tool({
          inputSchema: z.object({ q: z.string() }),
          execute: async ({ q }) => {
            executions++;
            return { found: `${q} facts` };
          },
        }),
      });
      const r = await generateText({
        model: durableModel(model, ctx),
        tools,
        prompt: 'go',
        stopWhen: stepCountIs(3),
      });
      return r.steps.flatMap((s) => s.toolResults.map((t) => t.output));
    });
    expect(executions).toBe(1);
    expect(out).toEqual([{ found: 'battery facts' }]);
  });

  it('grows the timeout on each try and hands the model the partial result after the last', async () => {
    rt = testRuntime();
    const started: number[] = [];
    const task = defineTask({
      name: 'slow-tool',
      run: async (_: unknown, ctx) => {
        const tools = durableTools(
          ctx,
          {
            survey: tool({
              inputSchema: z.object({}),
              async *execute(_input, { abortSignal }) {
                started.push(ctx.clock.now());
                yield { sources: 1 };
                yield { sources: 2 };
                await new Promise((_r, reject) =>
                  abortSignal?.addEventListener('abort', () => reject(abortSignal.reason)),
                );
              },
            }),
          },
          { timeout: '10s', backoff: ['5s', '15s'] },
        );
        const execute = tools.survey.execute as unknown as (
          i: unknown,
          o: { toolCallId: string; messages: [] },
        ) => Promise<unknown>;
        return execute({}, { toolCallId: 'c1', messages: [] });
      },
    });
    const h = await rt.baton.start(task, {});
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(h.id))?.status === 'succeeded', {
      stepMs: 1_000,
    });
    const t0 = started[0] as number;
    // 10 s, wait 5 s, 20 s, wait 15 s, 30 s.
    expect(started.map((t) => t - t0)).toEqual([0, 15_000, 50_000]);
    expect((await rt.baton.getRun(h.id))?.output).toMatchObject({
      status: 'timeout',
      partial: true,
      findings: [{ sources: 2 }],
      timeout_ms: 30_000,
      attempts: 3,
    });
  });

  it('refuses bad options naming the field', () => {
    expect(() => durableTools({} as never, {}, { retries: -1 })).toThrow(/options.retries must be/);
    expect(() => durableTools({} as never, {}, { timeout: 'soon' })).toThrow(/options.timeout/);
  });
});

describe('UI message stream through Baton events', () => {
  it('serves the chunks once, from Last-Event-ID, even after a retried attempt replayed them', async () => {
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream: streamOf(['a', 'b', 'c']) }) });
    await twoAttempts(async (ctx) => {
      const r = streamText({ model: durableModel(model, ctx), prompt: 'stream' });
      return recordUiStream(ctx, r.toUIMessageStream());
    });
    const runId = (await rt.baton.listRuns())[0]?.id as string;
    const read = async (res: Response) => {
      const body = await res.text();
      return body
        .trim()
        .split('\n\n')
        .map((block) => ({
          id: /^id: (\d+)/m.exec(block)?.[1],
          data: /^data: (.*)$/m.exec(block)?.[1] as string,
        }));
    };
    const all = await read(uiMessageStreamResponse(rt.baton, runId));
    expect(all.at(-1)?.data).toBe('[DONE]');
    const chunks = all.slice(0, -1).map((b) => JSON.parse(b.data) as { type: string; delta?: string });
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta)).toEqual(['a', 'b', 'c']);
    expect(chunks[0]?.type).toBe('start');
    expect(new Set(chunks.map((c) => JSON.stringify(c))).size).toBe(chunks.length);
    // Reconnect after the third chunk: only what follows it.
    const third = all[2]?.id as string;
    const rest = await read(
      uiMessageStreamResponse(rt.baton, runId, {
        request: new Request('http://x/', { headers: { 'last-event-id': third } }),
      }),
    );
    expect(rest.map((b) => b.data)).toEqual(all.slice(3).map((b) => b.data));
  });
});
