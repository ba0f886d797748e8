/**
 * A durable AI SDK agent (`baton/ai`), offline: a scripted model (the AI SDK's MockLanguageModelV3)
 * plans, calls two tools and writes an answer. Every model call is a memoized step, every tool
 * call runs once under growing timeouts, and the UI message stream is kept in the run's events.
 *
 *   npx tsx examples/ai/durable-agent.ts --crash   # SIGKILLs itself after the first tool result
 *   npx tsx examples/ai/durable-agent.ts           # takes the run back: no model call is paid twice
 *
 * Options: --db <file> (default ./ai-agent.db).
 */
import { parseArgs } from 'node:util';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { durableModel, durableTools } from '../../src/ai-sdk/index.ts';
import { createBaton, defineTask } from '../../src/index.ts';

const { values: args } = parseArgs({
  options: { db: { type: 'string', default: './ai-agent.db' }, crash: { type: 'boolean', default: false } },
});

type Result = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const usage: Result['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const call = (id: string, name: string, input: object): Result => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
});
const say = (text: string): Result => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: undefined },
  usage,
  warnings: [],
});

/** The scripted model: its answer depends on how many tool results the conversation holds. */
let modelCalls = 0;
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    modelCalls++;
    const results = prompt.filter((m) => m.role === 'tool').length;
    if (results === 0) return call('call-1', 'readings', { systemId: 'sys_123' });
    if (results === 1) return call('call-2', 'history', { cell: 'C' });
    return say('Cell C is degrading: its voltage sags 40 mV under load and has for 3 weeks.');
  },
});

let toolRuns = 0;
const agent = defineTask({
  name: 'battery-agent',
  input: z.object({ question: z.string() }),
  run: async ({ question }, ctx) => {
    const tools = durableTools(
      ctx,
      {
        readings: tool({
          description: 'Latest cell voltages',
          inputSchema: z.object({ systemId: z.string() }),
          execute: async ({ systemId }) => {
            toolRuns++;
            return { systemId, cells: { A: 3.31, B: 3.3, C: 3.26 } };
          },
        }),
        history: tool({
          description: 'Voltage sag history of one cell',
          inputSchema: z.object({ cell: z.string() }),
          execute: async ({ cell }) => {
            toolRuns++;
            if (args.crash) {
              console.error('simulating a crash: SIGKILL after the first tool result');
              process.kill(process.pid, 'SIGKILL');
            }
            return { cell, sagMv: [12, 25, 40], weeks: 3 };
          },
        }),
      },
      { timeout: '30s' },
    );
    const r = await generateText({
      model: durableModel(model, ctx),
      tools,
      prompt: question,
      stopWhen: stepCountIs(5),
    });
    return { answer: r.text, steps: r.steps.length };
  },
});

const baton = createBaton({ store: args.db, tasks: [agent] });
const [unfinished] = await baton.listRuns({ name: 'battery-agent', status: 'running' });
const handle = unfinished
  ? await baton.resume(unfinished.id)
  : await baton.start(agent, { question: 'Which cell is degrading?' });
if (unfinished) console.log(`taking back run ${unfinished.id} after the crash`);
const outcome = await handle.result();
console.log(`answer: ${(outcome.output as { answer: string }).answer}`);
console.log(`model calls in this process: ${modelCalls}, tool runs in this process: ${toolRuns}`);
const steps = await baton.store.getSteps(handle.id);
console.log(
  `memoized: ${steps.filter((s) => s.key.startsWith('ai:model')).length} model call(s), ${steps.filter((s) => s.key.startsWith('ai:tool')).length} tool call(s)`,
);
await baton.close();
