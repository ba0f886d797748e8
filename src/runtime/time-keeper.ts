/**
 * A task's view of its time budget: the protocol's time assessment, NORMAL/ACCELERATE mode changes,
 * the degradation decision for a tool kind, and the checkpoint moments. Pure apart from reading the
 * clock, and built from plain data, so a worker thread can keep its own copy.
 */
import {
  assessTime,
  type CheckpointPolicy,
  type CheckpointPolicyOptions,
  createCheckpointPolicy,
  DEFAULT_DEGRADATION_TABLE,
  type DegradationDecision,
  type DegradationTable,
  detectModeChange,
  type ModeChange,
  shouldSkip,
  type TimeAssessment,
  type TimeMode,
  type TimeThresholds,
  timeMode,
} from '../core/index.ts';
import type { Clock } from '../time/index.ts';

/** Everything a TimeKeeper needs, as plain data (it crosses into worker threads). */
export interface TimeKeeperInit {
  /** When the run's budget started (its first start; recorded, so it survives resume). */
  startMs: number;
  budgetMs: number;
  thresholds?: Partial<TimeThresholds>;
  degradation?: DegradationTable;
  checkpoints: CheckpointPolicyOptions;
  /** Items already analyzed when this attempt started (from the last checkpoint). */
  itemsAnalyzed: number;
}

export interface TaskTime {
  /** The protocol's time assessment now (items from the last checkpoint or progress report). */
  assess(): TimeAssessment;
  /** NORMAL, or ACCELERATE once less than 5 minutes (by default) remain. */
  readonly mode: TimeMode;
  /** Milliseconds left in the budget (negative once it is overrun). */
  remainingMs(): number;
  readonly budgetMs: number;
  readonly startMs: number;
}

export class TimeKeeper implements TaskTime {
  readonly budgetMs: number;
  readonly startMs: number;
  readonly checkpoints: CheckpointPolicy;
  private readonly table: DegradationTable;
  private items: number;
  private itemsAtLastCheckpoint: number;
  private last: TimeAssessment | undefined;

  constructor(
    private readonly init: TimeKeeperInit,
    private readonly clock: Clock,
    private readonly onModeChange: (change: ModeChange, assessment: TimeAssessment) => void = () => {},
  ) {
    this.budgetMs = init.budgetMs;
    this.startMs = init.startMs;
    this.table = init.degradation ?? DEFAULT_DEGRADATION_TABLE;
    this.checkpoints = createCheckpointPolicy({ budgetMs: init.budgetMs, ...init.checkpoints });
    this.items = init.itemsAnalyzed;
    this.itemsAtLastCheckpoint = init.itemsAnalyzed;
  }

  get itemsAnalyzed(): number {
    return this.items;
  }

  noteItems(count: number): void {
    if (Number.isFinite(count) && count >= 0) this.items = Math.floor(count);
  }

  noteCheckpoint(items: number): void {
    this.itemsAtLastCheckpoint = items;
  }

  assess(): TimeAssessment {
    const next = assessTime({
      startMs: this.startMs,
      nowMs: this.clock.now(),
      budgetMs: this.budgetMs,
      itemsAnalyzed: this.items,
      ...(this.init.thresholds ? { thresholds: this.init.thresholds } : {}),
    });
    const change = detectModeChange(this.last, next);
    this.last = next;
    if (change) this.onModeChange(change, next);
    return next;
  }

  get mode(): TimeMode {
    return timeMode(this.assess());
  }

  remainingMs(): number {
    return this.startMs + this.budgetMs - this.clock.now();
  }

  shouldSkip(kind: string): DegradationDecision {
    return shouldSkip(this.assess(), kind, this.table);
  }

  /** True when `itemsAnalyzed` crossed a multiple of the task's checkpoint interval. */
  shouldCheckpoint(itemsAnalyzed: number): boolean {
    this.noteItems(itemsAnalyzed);
    return this.checkpoints.afterItems(itemsAnalyzed, Math.min(this.itemsAtLastCheckpoint, itemsAnalyzed));
  }
}
