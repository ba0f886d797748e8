import type { ModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import { raceWithSignal } from './abortable.ts';
import type { AgentEvent, EmitAgentEvent } from './agent-events.ts';
import { AgentLoopError } from './agent-loop-error.ts';
import type {
  AgentLoopCompleted,
  AgentLoopResult,
  AgentLoopTimedOut,
  LoopResultBase,
} from './agent-loop-result.ts';
import { executeToolCalls, toSdkTools } from './agent-tools.ts';
import { validateResumable } from './check-messages.ts';
import type { CheckpointState } from './checkpoint-state.ts';
import { CheckpointWriter, type LoopSnapshot } from './checkpoint-writer.ts';
import { finalAnswerOf } from './final-answer.ts';
import { InvocationDeadline } from './invocation-deadline.ts';
import { type AgentLoopOptions, type ResolvedLoopOptions, resolveLoopOptions } from './loop-options.ts';
import { planResume } from './plan-resume.ts';
import { runModelTurn } from './run-model-turn.ts';

/*
 * The loop, one invocation of a resumable job (protocol 003).
 *
 * Start: a valid `resumeFrom` restores history and counters and skips `initialize`; an invalid
 * one is reported and the loop starts fresh from the prompt. A checkpoint that already ends with
 * the final answer (its run did not commit after the 'final' save) returns that answer at once:
 * no model call, no save. Then, turn by turn:
 *   1. If the job has made `maxTurns` turns: final checkpoint, completed ('max_turns').
 *   2. If at most `checkpointBeforeDeadlineMs` is left: 'pre_timeout' checkpoint, resumable timeout.
 *   3. One model call. No tool calls → the answer: 'final' checkpoint, completed.
 *   4. Execute the proposed tool calls (in parallel, each counted) and append ONE tool message
 *      with a result for every call. The turn is then committed; every N-th turn → 'periodic'.
 * History only ever grows by whole turns, so every snapshot is consistent (no call without its
 * result). When the pre-timeout moment passes during a turn, the last consistent state is saved
 * at once (the process may be killed at the hard deadline) while the turn goes on. At the hard
 * deadline the signal aborts the turn: an aborted model call leaves no trace; aborted tools get an
 * "aborted" error result so their turn still pairs up; then 'budget_exceeded' checkpoint and a
 * resumable timeout. Every checkpoint, the last included, is also in the result as `state`.
 */

export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const config = resolveLoopOptions(options);
  const run = new AgentLoopRun(options, config);
  try {
    return await run.execute();
  } finally {
    run.dispose();
  }
}

class AgentLoopRun {
  private readonly emit: EmitAgentEvent;
  private readonly deadline: InvocationDeadline;
  private readonly writer: CheckpointWriter;
  private history: ModelMessage[] = [];
  private turnCount = 0;
  private toolCallCount = 0;
  private contextSummary: Record<string, unknown> = {};
  private priorElapsedMs = 0;
  private wasResumed = false;
  private rejected: { reason: string; field: string } | undefined;
  private lastText = '';
  private turnInFlight = false;
  /** Leading history messages the AI SDK has checked in this invocation (runModelTurn). */
  private sdkChecked = 0;
  /** The restored checkpoint, when it already holds the job's final answer. */
  private finished: { state: CheckpointState; text: string } | undefined;

  constructor(
    private readonly options: AgentLoopOptions,
    private readonly config: ResolvedLoopOptions,
  ) {
    const { clock } = options;
    const startedAt = options.invocationStartedAt ?? clock.monotonic();
    this.emit = (event: AgentEvent) => {
      try {
        options.onEvent?.({ ...event, elapsedMs: clock.monotonic() - startedAt });
      } catch {
        // An observer (log, SSE) failing must not fail the job it observes.
      }
    };
    this.deadline = new InvocationDeadline(clock, {
      startedAt,
      timeoutMs: config.timeoutMs,
      preTimeoutMs: config.checkpointBeforeDeadlineMs,
      callerSignal: options.signal,
    });
    this.writer = new CheckpointWriter({
      clock,
      compression: config.compression,
      onCheckpoint: options.onCheckpoint,
      emit: this.emit,
    });
  }

  dispose(): void {
    this.deadline.dispose();
  }

  async execute(): Promise<AgentLoopResult> {
    await this.start();
    if (this.finished) return this.completeAgain(this.finished);
    this.deadline.onPreTimeout(() => {
      if (this.turnInFlight)
        this.writer.save(this.snapshot(), 'pre_timeout').catch((err: unknown) => this.deadline.fail(err));
    });
    const tools = this.options.tools ?? {};
    const sdkTools = Object.keys(tools).length > 0 ? toSdkTools(tools) : undefined;
    const { checkpointBeforeDeadlineMs: before, checkpointEveryTurns: every } = this.config;
    for (;;) {
      // Cancelled, or a background pre-timeout save failed, between turns.
      if (this.deadline.signal.aborted) return this.stopAfterAbort();
      if (this.turnCount >= this.config.maxTurns) return this.complete('max_turns', this.lastText);
      if (this.deadline.remaining() <= before) return this.timeOut('pre_timeout');
      const turn = this.turnCount + 1;
      const turnStarted = this.options.clock.monotonic();
      this.emit({ type: 'turn:started', turn, remainingMs: this.deadline.remaining() });
      this.turnInFlight = true;
      let reply: Awaited<ReturnType<typeof runModelTurn>>;
      try {
        const sent = this.history.length;
        reply = await runModelTurn({
          options: this.options,
          history: this.history,
          validated: this.sdkChecked,
          tools: sdkTools,
          signal: this.deadline.signal,
          maxRetries: this.config.maxRetries,
        });
        this.sdkChecked = sent;
      } catch (err) {
        this.turnInFlight = false;
        if (!this.deadline.signal.aborted) {
          // A background pre-timeout save may still be running; never leave it racing the caller.
          await this.writer.settle();
          throw this.failure('TASK_FAILED', `the model call of turn ${turn} failed`, err);
        }
        this.emit({ type: 'turn:aborted', turn, durationMs: this.options.clock.monotonic() - turnStarted });
        return this.stopAfterAbort();
      }
      if (reply.text) this.lastText = reply.text;
      const outcomes =
        reply.toolCalls.length === 0
          ? []
          : await executeToolCalls(reply.toolCalls, tools, {
              signal: this.deadline.signal,
              clock: this.options.clock,
              turn,
              emit: this.emit,
            });
      this.turnInFlight = false;
      // Commit the whole turn at once, so a snapshot never holds a call without its result.
      this.history.push(...reply.messages);
      if (outcomes.length > 0) this.history.push({ role: 'tool', content: outcomes.map((o) => o.part) });
      this.turnCount = turn;
      this.toolCallCount += outcomes.length;
      this.emit({
        type: 'turn:completed',
        turn,
        toolCalls: outcomes.length,
        finishReason: reply.finishReason,
        durationMs: this.options.clock.monotonic() - turnStarted,
      });
      if (outcomes.length === 0) return this.complete('final_answer', reply.text);
      if (this.deadline.signal.aborted) return this.stopAfterAbort();
      if (every > 0 && turn % every === 0 && this.deadline.remaining() > before)
        await this.writer.save(this.snapshot(), 'periodic');
    }
  }

  private async start(): Promise<void> {
    const { options, config, deadline } = this;
    if (options.resumeFrom !== undefined && options.resumeFrom !== null) {
      const check = validateResumable(options.resumeFrom);
      if (check.ok) {
        for (const warning of check.warnings) this.emit({ type: 'checkpoint:warning', warning });
        const plan = planResume(check.state, {
          timeoutMs: config.timeoutMs,
          now: options.clock.monotonic(),
          invocationStartedAt: deadline.deadline - config.timeoutMs,
        });
        const answer = finalAnswerOf(plan.conversationHistory);
        if (answer !== undefined) this.finished = { state: check.state, text: answer };
        this.history = plan.conversationHistory;
        // validateResumable checked them with the SDK's own schemas: the first model call does not again.
        this.sdkChecked = plan.conversationHistory.length;
        this.turnCount = plan.turnCount;
        this.toolCallCount = plan.toolCallCount;
        this.contextSummary = plan.contextSummary;
        this.priorElapsedMs = plan.priorElapsedMs;
        this.wasResumed = true;
        this.emit({
          type: 'agent:started',
          wasResumed: true,
          nextTurn: plan.nextTurn,
          timeoutMs: config.timeoutMs,
        });
        return;
      }
      this.rejected = { reason: check.reason, field: check.field };
      this.emit({ type: 'checkpoint:rejected', ...this.rejected });
    }
    if (options.prompt === undefined && options.messages === undefined) {
      const why = this.rejected ? `the checkpoint is unusable (${this.rejected.reason}) and ` : '';
      throw new ValidationError('prompt', `given (${why}there is no prompt or messages to start fresh from)`);
    }
    this.history =
      options.prompt !== undefined
        ? [{ role: 'user', content: options.prompt }]
        : [...(options.messages ?? [])];
    this.contextSummary = { ...(options.contextSummary ?? {}) };
    this.emit({ type: 'agent:started', wasResumed: false, nextTurn: 1, timeoutMs: config.timeoutMs });
    if (options.initialize) await this.initialize(options.initialize);
  }

  private async initialize(init: NonNullable<AgentLoopOptions['initialize']>): Promise<void> {
    const { signal } = this.deadline;
    try {
      const result = await raceWithSignal(
        Promise.resolve().then(() => init({ signal })),
        signal,
      );
      if (result?.messages) this.history.push(...result.messages);
      if (result?.contextSummary) Object.assign(this.contextSummary, result.contextSummary);
    } catch (err) {
      const cause = this.deadline.abortCause;
      if (cause === 'cancelled')
        throw this.failure('CANCELLED', 'the agent loop was cancelled during initialize', err);
      if (cause === 'deadline')
        throw this.failure(
          'TIMEOUT',
          'the time budget ran out before initialize finished; nothing to resume',
          err,
        );
      throw this.failure('TASK_FAILED', 'initialize failed', err);
    }
  }

  private snapshot(): LoopSnapshot {
    return {
      history: [...this.history],
      turnCount: this.turnCount,
      toolCallCount: this.toolCallCount,
      contextSummary: { ...this.contextSummary },
      elapsedMs: this.priorElapsedMs + this.deadline.elapsed(),
    };
  }

  private async complete(
    stopReason: 'final_answer' | 'max_turns',
    text: string,
  ): Promise<AgentLoopCompleted> {
    const state = await this.writer.save(this.snapshot(), 'final');
    this.emit({ type: 'agent:completed', turns: this.turnCount, toolCalls: this.toolCallCount, stopReason });
    return { status: 'completed', stopReason, text, ...this.resultBase(state) };
  }

  /**
   * The job already answered in an earlier invocation: return that answer from its checkpoint
   * without another model call or another save.
   */
  private completeAgain(finished: { state: CheckpointState; text: string }): AgentLoopCompleted {
    this.lastText = finished.text;
    this.emit({
      type: 'agent:completed',
      turns: this.turnCount,
      toolCalls: this.toolCallCount,
      stopReason: 'final_answer',
    });
    return {
      status: 'completed',
      stopReason: 'final_answer',
      text: finished.text,
      ...this.resultBase(finished.state),
    };
  }

  private async timeOut(reason: 'pre_timeout' | 'budget_exceeded'): Promise<AgentLoopTimedOut> {
    const state = await this.writer.save(this.snapshot(), reason);
    this.emit({ type: 'agent:timeout', reason, turns: this.turnCount, toolCalls: this.toolCallCount });
    return {
      status: 'timeout',
      canResume: true,
      reason,
      timeoutMs: this.config.timeoutMs,
      ...this.resultBase(state),
    };
  }

  private async stopAfterAbort(): Promise<AgentLoopTimedOut> {
    const cause = this.deadline.abortCause;
    if (cause === 'deadline') return this.timeOut('budget_exceeded');
    // Let a save already under way finish (or fail) before reporting.
    await this.writer.settle();
    if (cause === 'failed') throw this.deadline.signal.reason;
    throw this.failure('CANCELLED', 'the agent loop was cancelled', this.deadline.signal.reason);
  }

  private failure(
    code: 'CANCELLED' | 'TASK_FAILED' | 'TIMEOUT',
    message: string,
    cause: unknown,
  ): AgentLoopError {
    const detail = cause instanceof Error && cause.message !== message ? `: ${cause.message}` : '';
    return new AgentLoopError(code, `${message}${detail}`, {
      cause,
      state: this.writer.build(this.snapshot(), { quiet: true }),
      data: { turns: this.turnCount, toolCalls: this.toolCallCount },
    });
  }

  private resultBase(state: CheckpointState): LoopResultBase {
    return {
      turns: this.turnCount,
      toolCalls: this.toolCallCount,
      durationMs: this.deadline.elapsed(),
      wasResumed: this.wasResumed,
      state,
      ...(this.rejected ? { checkpointRejected: this.rejected } : {}),
    };
  }
}
