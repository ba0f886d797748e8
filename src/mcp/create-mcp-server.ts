/**
 * Baton as an MCP server on the official SDK: every task is a tool; a call starts a run and waits
 * for it under the client's patience, with progress notifications from its checkpoints; Baton's own
 * tools look at, resume and answer runs. One server per connection (stdio) or per request
 * (stateless Streamable HTTP): all state lives in Baton's store, so any server answers any run.
 */
import { InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CreateTaskResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { isBatonError } from '../core/index.ts';
import { type Baton, runOptionsOf } from '../runtime/index.ts';
import { type McpOptions, type ResolvedMcpOptions, resolveMcpOptions } from './mcp-options.ts';
import { refusedAnswer, scheduledAnswer, statusAnswer, type ToolAnswer } from './run-answers.ts';
import { RunTaskStore } from './task-store.ts';
import { BATON_TOOLS, buildCatalog, type CatalogEntry } from './tool-catalog.ts';
import { answerFor, type ProgressSink, waitForRun } from './wait-for-run.ts';

type Extra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '')
    throw new McpError(
      ErrorCode.InvalidParams,
      `${field} must be a non-empty string, got ${JSON.stringify(value)}`,
    );
  return value;
}

export class BatonMcp {
  readonly options: ResolvedMcpOptions;

  constructor(
    readonly baton: Baton,
    options: McpOptions = {},
  ) {
    this.options = resolveMcpOptions(options);
  }

  private catalog(): Map<string, CatalogEntry> {
    const tasks =
      this.options.tools ??
      this.baton.internals.tasks.names().map((n) => this.baton.internals.tasks.require(n));
    return buildCatalog(tasks);
  }

  /** A new SDK server bound to this Baton (one per connection or per stateless request). */
  createServer(): Server {
    const tasks = new RunTaskStore(
      this.baton,
      this.options.taskPollIntervalMs,
      () => new Set(this.catalog().keys()),
    );
    const server = new Server(
      { name: this.options.name, version: this.options.version },
      {
        capabilities: {
          tools: { listChanged: false },
          logging: {},
          // MCP tasks (experimental in the SDK): a task tool call is the run, task id = run id.
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
        },
        taskStore: tasks,
        // Questions for the client wait here until its tasks/result call takes them (per session).
        taskMessageQueue: new InMemoryTaskMessageQueue(),
        defaultTaskPollInterval: this.options.taskPollIntervalMs,
        instructions:
          'Tools run as durable Baton runs. A call not done in time answers with status "timeout", the findings so far and a run_id: call baton_resume with it to continue. A run that needs a decision answers with status "input_required": answer with baton_decide. Clients that support MCP tasks may call any task tool as a task: the task id is the run id.',
      },
    );
    tasks.attach(server);
    // Baton logs through its own logger; the level is accepted so clients that set one work.
    server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [...[...this.catalog().values()].map((e) => e.tool), ...BATON_TOOLS],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      request.params.task
        ? this.createTask(tasks, request.params.name, request.params.arguments ?? {})
        : this.callTool(request.params.name, request.params.arguments ?? {}, extra),
    );
    return server;
  }

  /** A task-augmented call: the run starts and its id comes back at once as the task's. */
  private async createTask(
    tasks: RunTaskStore,
    name: string,
    args: Record<string, unknown>,
  ): Promise<CreateTaskResult> {
    const entry = this.catalog().get(name);
    if (!entry)
      throw new McpError(
        ErrorCode.InvalidParams,
        BATON_TOOLS.some((t) => t.name === name)
          ? `${name} answers at once and does not run as a task: call it without "task"`
          : `unknown tool "${name}"`,
      );
    let runId: string;
    try {
      runId = (await this.baton.start(entry.task, entry.wrapped ? args.input : args)).id;
    } catch (err) {
      // Nothing was stored; a task that never existed cannot carry the refusal, the error does.
      if (isBatonError(err)) throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${err.message}`);
      throw err;
    }
    const task = await tasks.getTask(runId);
    if (!task) throw new Error(`run ${runId} vanished right after it started`);
    return { task };
  }

  private progressSink(extra: Extra): ProgressSink | undefined {
    const token = extra._meta?.progressToken;
    if (token === undefined) return undefined;
    return {
      token,
      send: (p) =>
        extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, ...p },
        }),
    };
  }

  async callTool(name: string, args: Record<string, unknown>, extra: Extra): Promise<ToolAnswer> {
    switch (name) {
      case 'baton_status':
        return this.status(text(args.run_id, 'run_id'));
      case 'baton_resume':
        return this.resume(text(args.run_id, 'run_id'), extra);
      case 'baton_decide':
        return this.decide(text(args.run_id, 'run_id'), text(args.choice, 'choice'), args.mode, extra);
    }
    const entry = this.catalog().get(name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"`);
    const input = entry.wrapped ? args.input : args;
    const since = this.baton.clock.now();
    let runId: string;
    try {
      runId = (await this.baton.start(entry.task, input)).id;
    } catch (err) {
      // Bad arguments are refused before anything is stored: an answer the model can correct.
      if (isBatonError(err)) return refusedAnswer(name, err.code, err.message);
      throw err;
    }
    const run = await this.baton.getRun(runId);
    const schedule = run ? runOptionsOf(run).schedule : undefined;
    if (run && schedule) return scheduledAnswer(run, schedule);
    return waitForRun(this.baton, {
      runId,
      replyWithinMs: this.options.replyWithinMs,
      signal: extra.signal,
      progress: this.progressSink(extra),
      wasResumed: false,
      since,
    });
  }

  private async found(runId: string) {
    const run = await this.baton.getRun(runId);
    if (!run) throw new McpError(ErrorCode.InvalidParams, `no run with id ${runId} (run_id)`);
    return run;
  }

  private async status(runId: string): Promise<ToolAnswer> {
    const run = await this.found(runId);
    const [partials, checkpoint] = await Promise.all([
      this.baton.store.listPartials(run.id),
      this.baton.store.getLastCheckpoint(run.id),
    ]);
    return statusAnswer(run, partials, checkpoint?.record);
  }

  private async resume(runId: string, extra: Extra): Promise<ToolAnswer> {
    let run = await this.found(runId);
    const since = this.baton.clock.now();
    let wasResumed = false;
    // A run that stopped (parked at its invocation limit, failed, cancelled, partial) continues from
    // its last checkpoint; one still working (or holding a delivery) is simply waited for again.
    const stopped =
      (run.status === 'waiting' && run.waitReason === 'resume') ||
      run.status === 'failed' ||
      run.status === 'cancelled';
    if (stopped) {
      try {
        run = (await this.baton.resume(runId, 'mcp', { strict: true })).resumed.run;
        wasResumed = true;
      } catch (err) {
        if (!isBatonError(err) || err.code !== 'RUN_CONFLICT') throw err;
        // Someone else resumed it first: wait for it like them.
      }
    }
    if (run.status === 'succeeded' || run.status === 'partial')
      return answerFor(this.baton, run, { waitedMs: 0, replyWithinMs: 0, wasResumed, timedOut: false });
    return waitForRun(this.baton, {
      runId,
      replyWithinMs: this.options.replyWithinMs,
      signal: extra.signal,
      progress: this.progressSink(extra),
      wasResumed,
      since,
    });
  }

  private async decide(runId: string, choice: string, mode: unknown, extra: Extra): Promise<ToolAnswer> {
    const run = await this.found(runId);
    const since = this.baton.clock.now();
    try {
      await this.baton.decide(runId, { choice, ...(typeof mode === 'string' ? { mode } : {}) }, 'mcp');
    } catch (err) {
      if (isBatonError(err)) return refusedAnswer('baton_decide', err.code, err.message);
      throw err;
    }
    return waitForRun(this.baton, {
      runId: run.rootId,
      replyWithinMs: this.options.replyWithinMs,
      signal: extra.signal,
      progress: this.progressSink(extra),
      wasResumed: false,
      since,
    });
  }
}

export function createMcp(baton: Baton, options: McpOptions = {}): BatonMcp {
  return new BatonMcp(baton, options);
}
