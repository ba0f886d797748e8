/**
 * The tasks `baton mcp --tasks examples/mcp/tools.ts` (or `baton serve --mcp`) offers as MCP tools.
 * Offline: the "model" is a scripted function, and each source takes a moment, so a call outlasts a
 * short reply window and shows the partial findings + resume flow.
 */
import { z } from 'zod';
import { defineTask, defineTool, SCHEDULE_JSON_SCHEMA } from '../../src/index.ts';

const SOURCES = [
  'Checkpointing every few items bounds the work lost to a crash.',
  'Agents that report partial findings at a timeout are preferred by users.',
  'Durable steps are memoized: a resumed run does not call the model twice.',
  'Most MCP clients give up on a tool call after about 60 seconds.',
  'Time budgets make an agent degrade gracefully instead of failing.',
  'Scheduled delivery lets a tool answer at the time the user asked for.',
];

/** The scripted model: the first words of a source, as a "claim". */
const summarize = (text: string) => text.split(' ').slice(0, 7).join(' ');

export const research = defineTask({
  name: 'research',
  input: z.object({ topic: z.string().describe('What to research') }),
  timeout: '2m',
  run: async ({ topic }, ctx) => {
    const state = (ctx.lastCheckpoint?.state as { next: number } | undefined) ?? { next: 0 };
    for (let i = state.next; i < SOURCES.length; i++) {
      const claim = await ctx.step(`source-${i}`, async () => {
        await ctx.delay(400); // reading the source
        return summarize(SOURCES[i] as string);
      });
      await ctx.partial({ source: i + 1, claim });
      await ctx.checkpoint({ next: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: SOURCES.length });
    }
    return { topic, report: `${SOURCES.length} sources read on ${topic}` };
  },
});

export const imageDraw = defineTool({
  name: 'image_draw',
  description: 'Draws an image from a prompt (scripted), delivered when the user asked.',
  inputSchema: {
    type: 'object',
    properties: { prompt: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['prompt'],
  },
  handler: async (args: { prompt: string }) => ({ image: `ascii art of ${args.prompt}` }),
});

export const tasks = [research, imageDraw];
