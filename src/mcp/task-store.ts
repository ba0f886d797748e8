/**
 * MCP tasks on the SDK's experimental task API, backed by Baton's store: the task is the run
 * (task id = run id), so a task outlives the session and the process that created it — a client
 * that reconnects (to this server or another on the same store) polls the same id. Status comes
 * from the run and its last checkpoint; an escalation is `input_required`, and the question goes
 * to the client as an elicitation with the menu as choices on the `tasks/result` stream; the answer
 * is the run's decision. `tasks/cancel` cancels the run.
 *
 * Access: any client of this endpoint may read a task by id and list tasks — the same as
 * `baton_status` and the REST API behind the same bearer token. Runs are Baton's, not a session's.
 */
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { Baton, OpenDecision } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';
import { finishedAnswer } from './run-answers.ts';
import { decisionForm, taskOf } from './run-tasks.ts';

/** How long the client may take to answer a question before it is asked again. */
const ANSWER_WITHIN_MS = 60 * 60_000;
const LIST_PAGE = 50;

export class RunTaskStore implements TaskStore {
  /** Questions (decision run ids) sent to this session's client and not yet answered. */
  private readonly asking = new Set<string>();
  private server: Server | undefined;

  constructor(
    private readonly baton: Baton,
    private readonly pollIntervalMs: number,
    /** The tool names served: tasks/list lists only runs of these. */
    private readonly toolNames: () => ReadonlySet<string>,
  ) {}

  /** The session's server, to send questions through (the store is built before it). */
  attach(server: Server): void {
    this.server = server;
  }

  createTask(): Promise<Task> {
    // Baton creates the task by starting the run: its id is the task id (see BatonMcp.callTool).
    return Promise.reject(new Error('Baton creates MCP tasks by starting runs, not through the task store'));
  }

  private async view(run: RunRecord): Promise<Task> {
    const [decisions, checkpoint, partials] = await Promise.all([
      this.baton.openDecisions(run.id),
      this.baton.store.getLastCheckpoint(run.id),
      this.baton.store.listPartials(run.id),
    ]);
    const task = taskOf({
      run,
      decisions,
      checkpoint: checkpoint?.record,
      findings: partials.length,
      pollIntervalMs: this.pollIntervalMs,
    });
    if (task.status === 'input_required') this.ask(run.id, decisions[0] as OpenDecision);
    return task;
  }

  async getTask(taskId: string): Promise<Task | null> {
    const run = await this.baton.getRun(taskId);
    // A flow's step is reached through its flow; only runs a tool call could start are tasks.
    if (!run || run.parentId !== null) return null;
    return this.view(run);
  }

  storeTaskResult(): Promise<void> {
    // The run's outcome is its result, committed by the engine; there is nothing else to store.
    return Promise.reject(new Error('a Baton task’s result is its run’s outcome'));
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const run = await this.baton.getRun(taskId);
    if (!run) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
    return finishedAnswer(run, await this.baton.store.listPartials(run.id));
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    // Only cancelling is the client's to decide; every other status follows the run.
    if (status === 'cancelled') await this.baton.cancel(taskId, 'cancelled by the MCP client (tasks/cancel)');
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const names = this.toolNames();
    const runs = await this.baton.listRuns({
      topLevel: true,
      limit: LIST_PAGE,
      ...(cursor ? { beforeId: cursor } : {}),
    });
    const tasks = await Promise.all(runs.filter((r) => names.has(r.name)).map((r) => this.view(r)));
    const last = runs.at(-1);
    return { tasks, ...(runs.length === LIST_PAGE && last ? { nextCursor: last.id } : {}) };
  }

  /**
   * Sends the question to the client as a form elicitation tied to the task: the SDK queues it and
   * delivers it on the client's `tasks/result` stream. Asked once per question per session; asked
   * again if the client fails to answer. A client without form elicitation reads the question and
   * its choices in the status message and answers with baton_decide.
   */
  private ask(taskId: string, d: OpenDecision): void {
    const server = this.server;
    // A run may ask more than once (each escalation after more attempts): one question per key.
    const key = `${d.runId}#${d.request.attempts}`;
    if (!server?.getClientCapabilities()?.elicitation?.form || this.asking.has(key)) return;
    this.asking.add(key);
    server
      .elicitInput(
        { mode: 'form', ...decisionForm(d) },
        { relatedTask: { taskId }, timeout: ANSWER_WITHIN_MS },
      )
      .then(async (r) => {
        // Declined or dismissed: the question stays open for a person, a policy or its timeout.
        if (r.action !== 'accept' || typeof r.content?.choice !== 'string') return;
        const mode = r.content.mode;
        await this.baton.decide(
          d.runId,
          { choice: r.content.choice, ...(typeof mode === 'string' ? { mode } : {}) },
          'mcp',
        );
        this.asking.delete(key);
      })
      .catch(() => {
        // Answered meanwhile by someone else, a refused answer, or the client went away: the run's
        // own state says what happens next, and the question is asked again if it is still open.
        this.asking.delete(key);
      });
  }
}
