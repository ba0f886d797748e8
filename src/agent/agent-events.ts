/**
 * What the agent loop reports as it goes, for the engine's append-only event log, logs and tests.
 * Every event carries `elapsedMs` (this invocation, monotonic) when emitted through the loop.
 */

export type CheckpointReason = 'periodic' | 'pre_timeout' | 'budget_exceeded' | 'final';

export type AgentEvent =
  | { type: 'agent:started'; wasResumed: boolean; nextTurn: number; timeoutMs: number }
  /** The resume checkpoint was unusable; the loop started fresh. Record it. */
  | { type: 'checkpoint:rejected'; reason: string; field: string }
  | { type: 'checkpoint:warning'; warning: string }
  | { type: 'turn:started'; turn: number; remainingMs: number }
  | { type: 'turn:completed'; turn: number; toolCalls: number; finishReason: string; durationMs: number }
  /** The model call of a turn was aborted (deadline or cancel); the turn left no trace in history. */
  | { type: 'turn:aborted'; turn: number; durationMs: number }
  | { type: 'tool:called'; turn: number; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool:completed'; turn: number; toolCallId: string; toolName: string; durationMs: number }
  | {
      type: 'tool:failed';
      turn: number;
      toolCallId: string;
      toolName: string;
      error: string;
      aborted: boolean;
      durationMs: number;
    }
  | {
      type: 'history:compressed';
      originalExchanges: number;
      resultExchanges: number;
      exchangeRatio: number;
      sizeRatio: number;
    }
  | { type: 'checkpoint:saved'; reason: CheckpointReason; turns: number; toolCalls: number; messages: number }
  | { type: 'agent:timeout'; reason: 'pre_timeout' | 'budget_exceeded'; turns: number; toolCalls: number }
  | { type: 'agent:completed'; turns: number; toolCalls: number; stopReason: 'final_answer' | 'max_turns' };

export type AgentEventWithTime = AgentEvent & { elapsedMs: number };

export type EmitAgentEvent = (event: AgentEvent) => void;
