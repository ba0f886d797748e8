/**
 * MCP tasks (the SDK's experimental task API) with the SDK's real client: over Streamable HTTP on
 * Baton's own server (a real socket), and over stdio to `baton mcp` as a child process. The task is
 * the run (task id = run id): status and progress from checkpoints, an escalation as
 * input_required whose question reaches the client as an elicitation with the menu as choices,
 * the answer as the run's decision, tasks/cancel cancelling the run, the result, and a task read
 * back by a client that connected after the one that started it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type HttpServer, serveHttp } from '../src/http/index.ts';
import { type Baton, createBaton, defineTask } from '../src/index.ts';
import { type McpHttpHandler, mountMcp } from '../src/mcp/index.ts';
import { TSX_LOADER } from './tsx-loader.ts';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'baton-mcp-tasks-'));
let baton: Baton;
let server: HttpServer;
let mcp: McpHttpHandler;
const gates = new Map<string, () => void>();
function gate(key: string): Promise<void> {
  return new Promise((resolve) => gates.set(key, resolve));
}
async function waitForGate(key: string) {
  while (!gates.has(key)) await new Promise((r) => setImmediate(r));
}

const research = defineTask({
  name: 'research',
  input: z.object({ topic: z.string(), key: z.string() }),
  run: async ({ topic, key }, ctx) => {
    for (let i = 0; i < 2; i++) {
      await ctx.partial({ claim: `${topic} ${i}` });
      await ctx.checkpoint({ next: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: 4 });
    }
    await gate(key);
    return { summary: `${topic}: done` };
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

beforeAll(async () => {
  baton = createBaton({ store: join(dir, 'tasks.db'), tasks: [research, fragile] });
  server = await serveHttp(baton, { port: 0 });
  mcp = mountMcp(server.handler, baton, { replyWithin: '10s', taskPollInterval: '20ms' });
});
afterAll(async () => {
  await mcp.close();
  await server.close();
  await baton.close();
  rmSync(dir, { recursive: true, force: true });
});

const clients: Client[] = [];
type Choice = { const: string; title: string };
interface Asked {
  message: string;
  choices: Choice[];
}
/** A client that declares form elicitation and answers each question with `answer`. */
async function connect(answer?: (q: Asked) => string | undefined, asked: Asked[] = []): Promise<Client> {
  const client = new Client(
    { name: 'baton-tasks-test', version: '1.0.0' },
    { capabilities: answer ? { elicitation: { form: {} } } : {} },
  );
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as unknown as {
        message: string;
        requestedSchema: { properties: { choice: { oneOf: Choice[] } } };
      };
      const q = { message: params.message, choices: params.requestedSchema.properties.choice.oneOf };
      asked.push(q);
      const choice = answer(q);
      return choice ? { action: 'accept', content: { choice } } : { action: 'decline' };
    });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function collect<T>(stream: AsyncGenerator<T>, onEach?: (m: T) => void): Promise<T[]> {
  const seen: T[] = [];
  for await (const m of stream) {
    seen.push(m);
    onEach?.(m);
  }
  return seen;
}

describe('MCP tasks over Streamable HTTP', () => {
  it('advertises tasks and offers every task tool as optional task, Baton’s own tools not', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.research?.execution).toEqual({ taskSupport: 'optional' });
    expect(byName.baton_status?.execution).toBeUndefined();
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'baton_status', arguments: { run_id: 'x' }, task: {} } },
        z.object({}).passthrough(),
      ),
    ).rejects.toThrow(/does not run as a task/);
  });

  it('runs a tool as a task: task id = run id, progress from checkpoints, then the result', async () => {
    const client = await connect();
    await client.listTools();
    const statuses: string[] = [];
    const stream = client.experimental.tasks.callToolStream({
      name: 'research',
      arguments: { topic: 'tasks', key: 't1' },
    });
    let taskId = '';
    const seen = await collect(stream, (msg) => {
      if (msg.type === 'taskCreated') taskId = msg.task.taskId;
      if (msg.type === 'taskStatus') {
        statuses.push(`${msg.task.status}: ${msg.task.statusMessage}`);
        // Let the run finish once the client has seen its progress from both checkpoints.
        if (/50% done, 2 items, 2 finding/.test(msg.task.statusMessage ?? '')) gates.get('t1')?.();
      }
    });
    const run = await baton.getRun(taskId);
    expect(run).toMatchObject({ id: taskId, name: 'research', status: 'succeeded' });
    expect(statuses.some((s) => /^working: running, attempt 1, 50% done, 2 items, 2 finding/.test(s))).toBe(
      true,
    );
    expect(statuses.at(-1)).toMatch(/^completed: research succeeded/);
    const result = seen.at(-1);
    expect(result?.type).toBe('result');
    expect((result as { result: CallToolResult }).result.structuredContent).toMatchObject({
      run_id: taskId,
      status: 'succeeded',
      output: { summary: 'tasks: done' },
    });
  });

  it('asks an escalation as input_required with the menu as choices; the answer is the run’s decision', async () => {
    const asked: Asked[] = [];
    const client = await connect(() => 'continue_partial', asked);
    await client.listTools();
    const seen = await collect(client.experimental.tasks.callToolStream({ name: 'fragile', arguments: {} }));
    const statuses = seen.flatMap((m) => (m.type === 'taskStatus' ? [m.task] : []));
    const waiting = statuses.find((t) => t.status === 'input_required');
    expect(waiting?.statusMessage).toMatch(/failed after 1 attempt.*Choices: .*continue_partial/s);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.message).toMatch(/failed after 1 attempt/);
    expect(asked[0]?.choices.map((c) => c.const)).toContain('continue_partial');
    expect(asked[0]?.choices.every((c) => c.title.length > 0)).toBe(true);
    const last = seen.at(-1) as { type: string; result: CallToolResult };
    expect(last.type).toBe('result');
    expect(last.result.structuredContent).toMatchObject({
      status: 'partial',
      findings: [{ found: 'one thing' }],
    });
    const taskId = (seen[0] as { task: { taskId: string } }).task.taskId;
    const events = await baton.store.readEvents({ runId: taskId, limit: 1000 });
    expect(events.find((e) => e.type === 'decision:made')?.data).toMatchObject({
      answer: { choice: 'continue_partial' },
      by: 'mcp',
    });
  });

  it('leaves the question open when the client declines, for baton_decide (or anyone) to answer', async () => {
    const asked: Asked[] = [];
    const client = await connect(() => undefined, asked);
    await client.listTools();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'fragile', arguments: {}, task: {} } },
      z.object({ task: z.object({ taskId: z.string() }).passthrough() }),
    );
    const taskId = created.task.taskId;
    let task = await client.experimental.tasks.getTask(taskId);
    while (task.status !== 'input_required') task = await client.experimental.tasks.getTask(taskId);
    // tasks/result delivers the question (declined) and then waits for the run to end.
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    while (asked.length === 0) await new Promise((r) => setImmediate(r));
    const other = await connect();
    const decided = await other.callTool({
      name: 'baton_decide',
      arguments: { run_id: taskId, choice: 'continue_partial' },
    });
    expect(decided.structuredContent).toMatchObject({ status: 'partial' });
    expect(((await result) as CallToolResult).structuredContent).toMatchObject({ status: 'partial' });
    expect(asked).toHaveLength(1);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it('cancels the run with tasks/cancel; a later client reads the task and lists it', async () => {
    const client = await connect();
    await client.listTools();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'research', arguments: { topic: 'c', key: 't2' }, task: {} } },
      z.object({ task: z.object({ taskId: z.string(), status: z.string() }).passthrough() }),
    );
    const taskId = created.task.taskId;
    expect(created.task.status).toBe('working');
    await waitForGate('t2');
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await baton.getRun(taskId))?.status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/terminal status: cancelled/);
    gates.get('t2')?.();

    const later = await connect();
    const task = await later.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: 'cancelled' });
    expect(task.ttl).toBeGreaterThan(0);
    const { tasks } = await later.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(taskId);
    await expect(later.experimental.tasks.getTask('run_nope')).rejects.toThrow(/not found/i);
  });

  it('refuses bad arguments for a task naming the field; nothing is started', async () => {
    const client = await connect();
    const before = (await baton.listRuns({ name: 'research' })).length;
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'research', arguments: { topic: 3 }, task: {} } },
        z.object({}).passthrough(),
      ),
    ).rejects.toThrow(/INVALID_INPUT: .*topic/);
    expect((await baton.listRuns({ name: 'research' })).length).toBe(before);
  });
});

describe('MCP tasks over stdio', () => {
  it('runs tasks in `baton mcp`: a result, an escalation answered through elicitation, the result', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        '--import',
        TSX_LOADER,
        join(root, 'src/cli/main.ts'),
        'mcp',
        '--tasks',
        join(root, 'test/fixtures/mcp-task-tools.ts'),
        '--db',
        join(dir, 'stdio.db'),
      ],
      cwd: dir,
      env: { ...process.env, BATON_CLI_MAIN: '1' } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'stdio-tasks', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { choice: 'continue_partial' } };
    });
    await client.connect(transport);
    try {
      await client.listTools();
      const counted = await collect(
        client.experimental.tasks.callToolStream({ name: 'count', arguments: { to: 3 } }),
      );
      const created = counted[0] as { type: string; task: { taskId: string } };
      expect(created.type).toBe('taskCreated');
      expect(created.task.taskId).toMatch(/^run_/);
      expect((counted.at(-1) as { result: CallToolResult }).result.structuredContent).toMatchObject({
        run_id: created.task.taskId,
        status: 'succeeded',
        output: { counted: 3 },
      });

      const fragile = await collect(
        client.experimental.tasks.callToolStream({ name: 'fragile', arguments: {} }),
      );
      expect(fragile.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required')).toBe(true);
      expect(asked).toEqual([expect.stringMatching(/failed after 1 attempt/)]);
      expect((fragile.at(-1) as { result: CallToolResult }).result.structuredContent).toMatchObject({
        status: 'partial',
      });
      const { tasks } = await client.experimental.tasks.listTasks();
      expect(tasks.map((t) => t.status).sort()).toEqual(['completed', 'completed']);
    } finally {
      await client.close();
    }
  });
});
