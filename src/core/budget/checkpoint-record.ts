import { lazySchema, schemasOnFirstUse } from '../../deps/index.ts';
import { ValidationError } from '../errors.ts';
import { type TimeAssessment, TimeStatuses } from './assess-time.ts';
import { roundTo2 } from './round-like-python.ts';

/**
 * The checkpoint record of protocol 000 ("Checkpoint Format"), with its snake_case fields.
 *
 * Two progress figures live in it and mean different things: the record's `progress_percentage` is
 * WORK progress (items done / items total, e.g. 3 of 15 = 20), while `time_assessment.progress_percentage`
 * is TIME progress (elapsed / budget, e.g. 40). Comparing them tells whether the work keeps pace with
 * the clock. When the total is not known the work progress is `null`, never a guess.
 */

export const CheckpointStatuses = ['in_progress', 'completed', 'partial', 'timeout'] as const;
export type CheckpointStatus = (typeof CheckpointStatuses)[number];

export interface CheckpointRecord {
  checkpoint_id: string;
  timestamp: string;
  items_analyzed: number;
  /** Work progress, 0–100 (2 decimals), or null when the total is unknown. */
  progress_percentage: number | null;
  time_assessment: TimeAssessment;
  status: CheckpointStatus;
  /** The Python writes a free-text summary beside the assessment; kept when given. */
  work_summary?: string;
}

export interface CheckpointRecordInput {
  /** e.g. "agent_001"; see `checkpointId`. */
  checkpointId: string;
  itemsAnalyzed: number;
  /** Items expected in all, when known; gives the work progress. */
  itemsTotal?: number;
  assessment: TimeAssessment;
  /** @default 'in_progress' */
  status?: CheckpointStatus;
  /** @default assessment.current_time (the checkpoint is taken when it is assessed) */
  timestamp?: string;
  workSummary?: string;
}

/** "agent" + 1 → "agent_001", the protocol's example form; sequences above 999 just grow. */
export function checkpointId(prefix: string, sequence: number): string {
  if (!Number.isInteger(sequence) || sequence < 1)
    throw new ValidationError('sequence', 'an integer ≥ 1', sequence);
  return `${prefix}_${String(sequence).padStart(3, '0')}`;
}

export function buildCheckpointRecord(input: CheckpointRecordInput): CheckpointRecord {
  const { itemsAnalyzed, itemsTotal } = input;
  if (input.checkpointId.length === 0) throw new ValidationError('checkpointId', 'a non-empty string', '');
  if (!Number.isInteger(itemsAnalyzed) || itemsAnalyzed < 0)
    throw new ValidationError('itemsAnalyzed', 'an integer ≥ 0', itemsAnalyzed);
  if (itemsTotal !== undefined && (!Number.isInteger(itemsTotal) || itemsTotal < 1))
    throw new ValidationError('itemsTotal', 'an integer ≥ 1', itemsTotal);
  const record: CheckpointRecord = {
    checkpoint_id: input.checkpointId,
    timestamp: input.timestamp ?? input.assessment.current_time,
    items_analyzed: itemsAnalyzed,
    progress_percentage: itemsTotal === undefined ? null : roundTo2((itemsAnalyzed / itemsTotal) * 100),
    time_assessment: input.assessment,
    status: input.status ?? 'in_progress',
  };
  if (input.workSummary !== undefined) record.work_summary = input.workSummary;
  return record;
}

// Python agents write naive local times with microseconds ("2026-02-09T12:00:00.123456"), Baton
// writes "…Z"; both are valid records. Built with zod on first use (see `deps/zod.ts`).
const schemas = schemasOnFirstUse((z) => {
  const isoDateTime = z.iso.datetime({ offset: true, local: true });
  const timeAssessment = z.object({
    start_time: isoDateTime,
    current_time: isoDateTime,
    elapsed_seconds: z.int(),
    elapsed_formatted: z.string().regex(/^-?\d+ minutes$/),
    remaining_seconds: z.int(),
    remaining_formatted: z.string().regex(/^-?\d+ minutes$/),
    budget_seconds: z.number().positive(),
    budget_formatted: z.string().regex(/^\d+ minutes$/),
    progress_percentage: z.number(),
    time_status: z.enum(TimeStatuses),
    items_per_minute: z.number().nonnegative(),
  });
  const checkpointRecord = z.object({
    checkpoint_id: z.string().min(1),
    timestamp: isoDateTime,
    items_analyzed: z.int().nonnegative(),
    progress_percentage: z.number().min(0).nullable(),
    time_assessment: timeAssessment,
    status: z.enum(CheckpointStatuses),
    work_summary: z.string().optional(),
  });
  return { timeAssessment, checkpointRecord };
});

export const timeAssessmentSchema = lazySchema(() => schemas().timeAssessment);
export const checkpointRecordSchema = lazySchema(() => schemas().checkpointRecord);
