import type { ModelMessage } from 'ai';
import type { Clock } from '../time/index.ts';
import type { CheckpointReason, EmitAgentEvent } from './agent-events.ts';
import { type CheckpointState, createCheckpointState } from './checkpoint-state.ts';
import { type CompressionOptions, compressConversationHistory } from './compress-history.ts';

/** The loop's consistent state at one moment: no tool call without its result. */
export interface LoopSnapshot {
  history: readonly ModelMessage[];
  turnCount: number;
  toolCallCount: number;
  contextSummary: Record<string, unknown>;
  /** Whole-job elapsed time at the moment of the snapshot. */
  elapsedMs: number;
}

/**
 * Turns snapshots into checkpoints (compressed when over the threshold) and hands them to the
 * caller's `onCheckpoint` one at a time, in order: a pre-timeout save started while a turn is in
 * flight must not race the next save into the store.
 */
export class CheckpointWriter {
  private queue: Promise<unknown> = Promise.resolve();
  private last: CheckpointState | undefined;

  constructor(
    private readonly options: {
      clock: Clock;
      compression: Required<CompressionOptions> | false;
      onCheckpoint: (state: CheckpointState, reason: CheckpointReason) => Promise<void>;
      emit: EmitAgentEvent;
    },
  ) {}

  /** The last checkpoint handed over successfully. */
  get lastSaved(): CheckpointState | undefined {
    return this.last;
  }

  /** Builds the checkpoint now (the snapshot is taken at call time) and saves it after earlier saves. */
  save(snapshot: LoopSnapshot, reason: CheckpointReason): Promise<CheckpointState> {
    const state = this.build(snapshot);
    const run = this.queue.then(async () => {
      await this.options.onCheckpoint(state, reason);
      this.last = state;
      this.options.emit({
        type: 'checkpoint:saved',
        reason,
        turns: state.turnCount,
        toolCalls: state.toolCallCount,
        messages: state.conversationHistory.length,
      });
      return state;
    });
    // A failed save must not block later ones; its own caller sees the rejection.
    this.queue = run.catch(() => {});
    return run;
  }

  /** Waits until every save started so far has settled. */
  async settle(): Promise<void> {
    await this.queue;
  }

  /** The checkpoint for a snapshot, without saving it; `quiet` skips the compression event. */
  build(snapshot: LoopSnapshot, { quiet = false } = {}): CheckpointState {
    let history = [...snapshot.history];
    if (this.options.compression !== false) {
      const result = compressConversationHistory(history, this.options.compression);
      if (result.compressed) {
        history = result.messages;
        if (!quiet)
          this.options.emit({
            type: 'history:compressed',
            originalExchanges: result.originalExchanges,
            resultExchanges: result.resultExchanges,
            exchangeRatio: result.exchangeRatio,
            sizeRatio: result.sizeRatio,
          });
      }
    }
    return createCheckpointState({
      conversationHistory: history,
      turnCount: snapshot.turnCount,
      toolCallCount: snapshot.toolCallCount,
      contextSummary: snapshot.contextSummary,
      elapsedMs: snapshot.elapsedMs,
      now: this.options.clock.now(),
      compression: false,
    });
  }
}
