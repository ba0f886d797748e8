/**
 * An agent task (protocol 003): a ReAct tool-calling loop on the AI SDK that runs under an
 * invocation limit (default 60 s), checkpoints its conversation every 5 turns and just before the
 * limit (at 55 s), and when time runs out parks the run in `waiting: resume` — the protocol's
 * resumable timeout — instead of failing. A resume continues from the saved conversation with the
 * turn and tool-call counters carried on (8 + 10 = 18 turns).
 */
import type { LanguageModel } from 'ai';
import {
  type AgentEventWithTime,
  type AgentTool,
  type CheckpointState,
  type CompressionOptions,
  runAgentLoop,
} from '../agent/index.ts';
import { BatonError } from '../core/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';
import { defineTask, type TaskDefinition, type TaskOptions } from './define-task.ts';
import type { TaskContext } from './task-context.ts';

/** What an agent task returns: the model's final text and how the loop went. */
export interface AgentOutput {
  text: string;
  turns: number;
  toolCalls: number;
  /** This invocation only (the protocol's metadata). */
  durationMs: number;
  wasResumed: boolean;
  stopReason: string;
  /** The context the agent gathered (protocol 003's `insights.contextSummary`). */
  contextSummary: Record<string, unknown>;
  /** The model called tools (functions) in this job, in any invocation (003's metadata). */
  usedFunctionCalling: boolean;
}

/** Options of defineAgentTask: a task option set plus the model, the system prompt and the tools. */
export interface AgentTaskOptions<I>
  extends Omit<TaskOptions<I, AgentOutput>, 'run' | 'timeout' | 'onTimeout'> {
  model: LanguageModel | ((input: I, ctx: TaskContext) => LanguageModel | Promise<LanguageModel>);
  system?: string | ((input: I) => string);
  prompt: (input: I) => string;
  tools?: Record<string, AgentTool> | ((input: I, ctx: TaskContext) => Record<string, AgentTool>);
  /** The invocation limit (a serverless function's). @default "60s" */
  timeout?: Duration;
  /** Checkpoint this long before the limit. @default "5s" */
  checkpointBeforeDeadline?: Duration;
  /** @default 5 */
  checkpointEveryTurns?: number;
  maxTurns?: number;
  /** History compression: first 5, a marker, last 20 once over 50 exchanges. */
  compression?: CompressionOptions | false;
  /** "park" (resumable timeout, the protocol) or "retry" (Baton's retry policy). @default "park" */
  onTimeout?: 'park' | 'retry';
}

/** Agent loop events worth keeping in the run's log (the rest go to the logger). */
const RECORDED = new Set([
  'checkpoint:rejected',
  'checkpoint:warning',
  'history:compressed',
  'agent:timeout',
]);

/** Defines a task that runs a resumable, deadline-bound agent (ReAct) loop over an AI SDK model and tools. */
export function defineAgentTask<I>(options: AgentTaskOptions<I>): TaskDefinition<I, AgentOutput> {
  const {
    model,
    system,
    prompt,
    tools,
    checkpointBeforeDeadline,
    checkpointEveryTurns,
    maxTurns,
    compression,
    ...rest
  } = options;
  const at = (f: string) => `agent "${options.name}".${f}`;
  if (typeof prompt !== 'function')
    throw new BatonError('INVALID_OPTION', `${at('prompt')} must be a function of the input`);
  const marginMs = parseDuration(checkpointBeforeDeadline ?? 5_000, at('checkpointBeforeDeadline'));
  return defineTask<I, AgentOutput>({
    ...rest,
    timeout: options.timeout ?? '60s',
    onTimeout: options.onTimeout ?? 'park',
    async run(input, ctx) {
      const started = ctx.clock.monotonic();
      const result = await runAgentLoop({
        model: typeof model === 'function' ? await model(input, ctx) : model,
        ...(system !== undefined ? { system: typeof system === 'function' ? system(input) : system } : {}),
        prompt: prompt(input),
        ...(tools !== undefined ? { tools: typeof tools === 'function' ? tools(input, ctx) : tools } : {}),
        clock: ctx.clock,
        timeoutMs: ctx.timeoutMs,
        checkpointBeforeDeadlineMs: Math.min(marginMs, Math.max(0, ctx.timeoutMs - 1)),
        ...(checkpointEveryTurns !== undefined ? { checkpointEveryTurns } : {}),
        ...(maxTurns !== undefined ? { maxTurns } : {}),
        ...(compression !== undefined ? { compression } : {}),
        resumeFrom: ctx.lastCheckpoint?.state ?? null,
        invocationStartedAt: started,
        signal: ctx.signal,
        onCheckpoint: async (state: CheckpointState, reason) => {
          await ctx.checkpoint(state, {
            itemsAnalyzed: state.turnCount,
            status: reason === 'final' ? 'completed' : 'in_progress',
          });
        },
        onEvent: (event: AgentEventWithTime) => {
          if (event.type === 'turn:completed') ctx.progress((event as { turn?: number }).turn ?? 0);
          if (RECORDED.has(event.type)) ctx.emit(event.type, event as unknown as Record<string, unknown>);
          else ctx.log.debug({ agentEvent: event.type }, 'agent event');
        },
      });
      if (result.status === 'completed')
        return {
          text: result.text,
          turns: result.turns,
          toolCalls: result.toolCalls,
          durationMs: Math.round(result.durationMs),
          wasResumed: result.wasResumed,
          stopReason: result.stopReason,
          contextSummary: result.state.contextSummary,
          usedFunctionCalling: result.toolCalls > 0,
        };
      throw new BatonError(
        'TIMEOUT',
        `agent "${options.name}" timed out after ${result.timeoutMs}ms. A checkpoint was saved - resume to continue.`,
        {
          data: {
            resumable: true,
            turns: result.turns,
            toolCalls: result.toolCalls,
            durationMs: Math.round(result.durationMs),
            timeoutMs: result.timeoutMs,
            wasResumed: result.wasResumed,
          },
        },
      );
    },
  });
}
