/**
 * The example agent of protocol 003: a battery-insights analyst that calls tools over a few days of
 * readings. It uses a real model when one is configured (BATON_LLM_API_KEY or OPENAI_API_KEY, and
 * optionally BATON_LLM_BASE_URL / BATON_LLM_MODEL for any OpenAI-compatible server, e.g. a local
 * one), and otherwise a scripted local model that needs no network. Its 12-second invocation limit
 * is short on purpose so the resumable timeout is easy to see: `baton serve` answers 408 with a job
 * id, and a resume continues the conversation from its checkpoint.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import { z } from 'zod';
import { createScriptedModel, type ScriptContext, type ScriptedTurn } from '../../src/agent/index.ts';
import { agentTool, defineAgentTask, systemClock } from '../../src/index.ts';

interface Reading {
  day: number;
  cell: string;
  voltage: number;
  temperature: number;
}

// Deterministic readings: 4 cells over 14 days; cell C drifts warm and low.
const readings: Reading[] = Array.from({ length: 14 * 4 }, (_, i) => {
  const day = Math.floor(i / 4) + 1;
  const cell = 'ABCD'[i % 4] as string;
  const drift = cell === 'C' ? day * 0.012 : 0;
  return {
    day,
    cell,
    voltage: Math.round((3.7 - drift + ((i * 7) % 5) / 1000) * 1000) / 1000,
    temperature: 24 + (cell === 'C' ? day * 0.4 : (i % 3) * 0.3),
  };
});

const tools = {
  query_readings: agentTool({
    description: 'Readings of one cell between two days.',
    inputSchema: z.object({
      cell: z.enum(['A', 'B', 'C', 'D']),
      from: z.number().int().min(1).max(14),
      to: z.number().int().min(1).max(14),
    }),
    execute: async ({ cell, from, to }) =>
      readings.filter((r) => r.cell === cell && r.day >= from && r.day <= to),
  }),
  cell_stats: agentTool({
    description: 'Mean voltage and temperature of one cell over all days, and the trend per day.',
    inputSchema: z.object({ cell: z.enum(['A', 'B', 'C', 'D']) }),
    execute: async ({ cell }) => {
      const rs = readings.filter((r) => r.cell === cell);
      const mean = (f: (r: Reading) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
      const first = rs[0] as Reading;
      const last = rs.at(-1) as Reading;
      return {
        cell,
        meanVoltage: Math.round(mean((r) => r.voltage) * 1000) / 1000,
        meanTemperature: Math.round(mean((r) => r.temperature) * 10) / 10,
        voltageTrendPerDay:
          Math.round(((last.voltage - first.voltage) / (last.day - first.day)) * 10_000) / 10_000,
      };
    },
  }),
};

/** A scripted analyst: looks at each cell twice, then answers. Each turn takes 1.2 s. */
function script(ctx: ScriptContext): ScriptedTurn {
  const cells = ['A', 'B', 'C', 'D'];
  const t = ctx.turn;
  if (t <= 4)
    return { toolCalls: [{ toolName: 'cell_stats', input: { cell: cells[t - 1] } }], delayMs: 1_200 };
  if (t <= 12) {
    const cell = cells[(t - 5) % 4] as string;
    const from = t <= 8 ? 1 : 8;
    return {
      toolCalls: [{ toolName: 'query_readings', input: { cell, from, to: from + 6 } }],
      delayMs: 1_200,
    };
  }
  return {
    text: 'Cell C is degrading: its voltage falls about 12 mV a day and it runs up to 5 °C warmer than the others. Cells A, B and D are stable. Inspect or replace cell C.',
    delayMs: 800,
  };
}

function chooseModel(): LanguageModel {
  const apiKey = process.env.BATON_LLM_API_KEY ?? process.env.OPENAI_API_KEY;
  if (!apiKey) return createScriptedModel(script, { clock: systemClock, modelId: 'scripted-analyst' });
  const provider = createOpenAICompatible({
    name: 'llm',
    baseURL: process.env.BATON_LLM_BASE_URL ?? 'https://api.openai.com/v1',
    apiKey,
  });
  return provider.chatModel(process.env.BATON_LLM_MODEL ?? 'gpt-4o-mini');
}

export const batteryInsights = defineAgentTask({
  name: 'battery-insights',
  input: z.object({
    systemId: z.string().min(1),
    customPrompt: z.string().default('Provide comprehensive battery analysis'),
  }),
  model: () => chooseModel(),
  system: 'You are a battery analyst. Use the tools to look at every cell before you conclude. Be brief.',
  prompt: (i) => `${i.customPrompt} for system ${i.systemId}.`,
  tools,
  timeout: '12s',
  checkpointBeforeDeadline: '2s',
  maxTurns: 30,
});

export default { tasks: [batteryInsights] };
