import { BatonError, type BatonErrorOptions } from '../core/index.ts';
import type { CheckpointState } from './checkpoint-state.ts';

/**
 * Why the loop stopped without a result it could return: cancelled by the caller (`CANCELLED`),
 * the model or `initialize` failed (`TASK_FAILED`), or the budget ran out before `initialize`
 * finished (`TIMEOUT`, nothing resumable yet). `state` is the last consistent state, NOT saved:
 * the caller may store it so that a retry resumes from there rather than from the last periodic
 * checkpoint. It is kept out of `data` so serialized errors stay small.
 */
export class AgentLoopError extends BatonError {
  readonly state: CheckpointState | undefined;

  constructor(
    code: 'CANCELLED' | 'TASK_FAILED' | 'TIMEOUT',
    message: string,
    options: BatonErrorOptions & { state?: CheckpointState | undefined } = {},
  ) {
    const { state, ...rest } = options;
    super(code, message, rest);
    this.state = state;
  }
}
