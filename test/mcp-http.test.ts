/**
 * baton/mcp over Streamable HTTP on the same server as Baton's API, driven by the MCP SDK's real
 * client over a real socket: tools listed from tasks, results, progress notifications from
 * checkpoints, the partial findings and run id just before the client's patience runs out, then
 * baton_resume / baton_status, decisions, scheduled tools acknowledged with their time, bad
 * arguments refused naming the field, and a cancelled call cancelling its run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type Baton, createBaton, defineTask, defineTool, SCHEDULE_JSON_SCHEMA } from '../src/index.ts';
import { type McpHttpHandler, mountMcp } from '../src/mcp/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-'));
let baton: Baton;
let server: HttpServer;
let mcp: McpHttpHandler;
const gates = new Map<string, () => void>();
/** A promise the test resolves to let a run go on (no sleeping on either side). */
function gate(key: string): Promise<void> {
  return new Promise((resolve) => gates.set(key, resolve));
}
async function open(key: string) {
  while (!gates.has(key)) await new Promise((r) => setImmediate(r));
  gates.get(key)?.();
  gates.delete(key);
}

const add = defineTask({
  name: 'add',
  input: z.object({ a: z.number(), b: z.number() }),
  run: async ({ a, b }) => ({ sum: a + b }),
});

const research = defineTask({
  name: 'research',
  input: z.object({ topic: z.string(), key: z.string() }),
  run: async ({ topic, key }, ctx) => {
    for (let i = 0; i < 3; i++) {
      await ctx.partial({ source: `s${i}`, claim: `${topic} claim ${i}` });
      await ctx.checkpoint({ next: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: 4 });
    }
    await gate(key);
    return { summary: `${topic}: 4 sources` };
  },
});

const fragile = defineTask({
  name: 'fragile',
  escalation: { ask: true },
  retry: { maxRetries: 0 },
  run: async (_: unknown, ctx) => {
    await ctx.partial({ found: 'one thing' });
    throw new Error('the source is down');
  },
});

const draw = defineTool({
  name: 'image_draw',
  description: 'Draws an image.',
  inputSchema: {
    type: 'object',
    properties: { prompt: { type: 'string' }, schedule: SCHEDULE_JSON_SCHEMA },
    required: ['prompt'],
  },
  handler: async (args: { prompt: string }) => ({ image: `drawing of ${args.prompt}` }),
});

beforeAll(async () => {
  baton = createBaton({ store: join(dir, 'mcp.db'), tasks: [add, research, fragile, draw] });
  server = await serveHttp(baton, { port: 0 });
  mcp = mountMcp(server.handler, baton, { replyWithin: '1500ms' });
});
afterAll(async () => {
  await mcp.close();
  await server.close();
  await baton.close();
  rmSync(dir, { recursive: true, force: true });
});

const clients: Client[] = [];
async function connect(): Promise<Client> {
  const client = new Client({ name: 'baton-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

type Structured = Record<string, unknown>;

describe('baton/mcp over Streamable HTTP', () => {
  it('lists the tasks as tools with JSON Schemas, and Baton’s own tools', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      ['add', 'baton_decide', 'baton_resume', 'baton_status', 'fragile', 'image_draw', 'research'].sort(),
    );
    expect(byName.add?.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    expect(byName.image_draw?.description).toMatch(/Draws an image\..*schedule/);
    expect(byName.image_draw?.inputSchema.properties).toHaveProperty('schedule');
  });

  it('answers a quick task with its result; the REST API on the same server sees the run', async () => {
    const client = await connect();
    const r = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ status: 'succeeded', output: { sum: 5 } });
    const runId = (r.structuredContent as Structured).run_id as string;
    const rest = await fetch(`${server.url}/runs/${runId}`);
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ run: { id: runId, status: 'succeeded' } });
  });

  it('refuses bad arguments naming the field, and unknown tools as a protocol error', async () => {
    const client = await connect();
    const r = await client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } });
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]?.text).toMatch(/INVALID_INPUT: .*\ba\b/);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/unknown tool "nope"/);
    await expect(client.callTool({ name: 'baton_status', arguments: {} })).rejects.toThrow(/run_id must be/);
  });

  it('sends progress from checkpoints, answers with partial findings and a run id before the deadline, then resumes', async () => {
    const client = await connect();
    const progress: Array<{ progress: number; message?: string }> = [];
    const first = await client.callTool(
      { name: 'research', arguments: { topic: 'durable agents', key: 'r1' } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    const s = first.structuredContent as Structured;
    expect(s).toMatchObject({
      status: 'timeout',
      partial: true,
      error: 'research_timeout',
      details: { canResume: true, wasResumed: false, timeoutMs: 1500 },
      resume: { tool: 'baton_resume' },
    });
    expect(s.findings).toEqual([
      { source: 's0', claim: 'durable agents claim 0' },
      { source: 's1', claim: 'durable agents claim 1' },
      { source: 's2', claim: 'durable agents claim 2' },
    ]);
    const cps = progress.filter((p) => /^checkpoint/.test(p.message ?? ''));
    expect(cps.map((p) => p.message)).toEqual([
      expect.stringMatching(/^checkpoint 1, 25% done, 1 items/),
      expect.stringMatching(/^checkpoint 2, 50% done, 2 items/),
      expect.stringMatching(/^checkpoint 3, 75% done, 3 items/),
    ]);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));

    const runId = s.run_id as string;
    const status = await client.callTool({ name: 'baton_status', arguments: { run_id: runId } });
    expect(status.structuredContent).toMatchObject({ run_id: runId, status: 'running', findings: 3 });

    const resumed = client.callTool({ name: 'baton_resume', arguments: { run_id: runId } });
    await open('r1');
    expect((await resumed).structuredContent).toMatchObject({
      status: 'succeeded',
      output: { summary: 'durable agents: 4 sources' },
    });
    // Resuming a finished run answers with its stored result at once.
    const again = await client.callTool({ name: 'baton_resume', arguments: { run_id: runId } });
    expect(again.structuredContent).toMatchObject({ status: 'succeeded' });
  });

  it('turns an escalation into a question with choices, answered with baton_decide', async () => {
    const client = await connect();
    const asked = await client.callTool({ name: 'fragile', arguments: {} });
    const q = asked.structuredContent as Structured;
    expect(q.status).toBe('input_required');
    expect(q.question).toMatch(/failed after 1 attempt/);
    const choices = (q.choices as Array<{ id: string }>).map((c) => c.id);
    expect(choices).toContain('continue_partial');
    const bad = await client.callTool({
      name: 'baton_decide',
      arguments: { run_id: q.decision_run_id as string, choice: 'fly_away' },
    });
    expect(bad.isError).toBe(true);
    const done = await client.callTool({
      name: 'baton_decide',
      arguments: { run_id: q.decision_run_id as string, choice: 'continue_partial' },
    });
    expect(done.structuredContent).toMatchObject({ status: 'partial', findings: [{ found: 'one thing' }] });
  });

  it('acknowledges a scheduled tool at once with the resolved delivery time', async () => {
    const client = await connect();
    const before = Date.now();
    const r = await client.callTool({
      name: 'image_draw',
      arguments: { prompt: 'a lighthouse', schedule: { when: 'in 2 minutes', timezone: 'Asia/Shanghai' } },
    });
    const s = r.structuredContent as Structured;
    expect(s).toMatchObject({
      status: 'scheduled',
      delay_ms: 120_000,
      schedule: { timezone: 'Asia/Shanghai' },
    });
    const at = Date.parse(s.deliver_at as string);
    expect(at).toBeGreaterThanOrEqual(before + 119_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 121_000);
    expect((r.content as Array<{ text: string }>)[0]?.text).toMatch(/delivered at .*\+08:00/);
  });

  it('cancels the run when the client cancels its call', async () => {
    const client = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: 'research', arguments: { topic: 'x', key: 'r2' } }, undefined, {
      signal: controller.signal,
    });
    while (!gates.has('r2')) await new Promise((r) => setImmediate(r));
    const [running] = await baton.listRuns({ name: 'research', status: 'running' });
    controller.abort('changed my mind');
    await expect(call).rejects.toThrow();
    const ended = await baton.settled(running?.id as string);
    expect(ended.status).toBe('cancelled');
    gates.get('r2')?.();
  });
});
