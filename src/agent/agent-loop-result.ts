import type { CheckpointState } from './checkpoint-state.ts';

/** What one invocation of the agent loop returns: the answer, or a resumable timeout. */
export interface LoopResultBase {
  /** Totals for the job, all invocations (8 from the checkpoint + 10 new = 18). */
  turns: number;
  toolCalls: number;
  /** This invocation only. */
  durationMs: number;
  wasResumed: boolean;
  /** The last checkpoint, also given to `onCheckpoint`. */
  state: CheckpointState;
  /** Set when `resumeFrom` was unusable and the loop started fresh: record it as an event. */
  checkpointRejected?: { reason: string; field: string };
}

export interface AgentLoopCompleted extends LoopResultBase {
  status: 'completed';
  stopReason: 'final_answer' | 'max_turns';
  text: string;
}

export interface AgentLoopTimedOut extends LoopResultBase {
  status: 'timeout';
  canResume: true;
  reason: 'pre_timeout' | 'budget_exceeded';
  timeoutMs: number;
}

export type AgentLoopResult = AgentLoopCompleted | AgentLoopTimedOut;
