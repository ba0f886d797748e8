import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { assessTime } from './assess-time.ts';
import {
  buildCheckpointRecord,
  type CheckpointRecord,
  checkpointId,
  checkpointRecordSchema,
  timeAssessmentSchema,
} from './checkpoint-record.ts';

const START = Date.parse('2026-02-09T11:30:00Z');
const assessment = assessTime({
  startMs: START,
  nowMs: START + 1_800_000,
  budgetMs: 4_500_000,
  itemsAnalyzed: 3,
});

describe('checkpoint record', () => {
  it('builds the protocol example: work progress 20 % beside time progress 40 %', () => {
    const record = buildCheckpointRecord({
      checkpointId: checkpointId('agent', 1),
      itemsAnalyzed: 3,
      itemsTotal: 15,
      assessment,
    });
    expect(record).toEqual({
      checkpoint_id: 'agent_001',
      timestamp: '2026-02-09T12:00:00Z',
      items_analyzed: 3,
      progress_percentage: 20,
      time_assessment: assessment,
      status: 'in_progress',
    });
    expect(record.time_assessment.progress_percentage).toBe(40);
    expect(checkpointRecordSchema.parse(record)).toEqual(record);
  });

  it('leaves work progress null when the total is unknown, and keeps a work summary', () => {
    const record = buildCheckpointRecord({
      checkpointId: 'x_002',
      itemsAnalyzed: 4,
      assessment,
      workSummary: 'two found',
    });
    expect(record.progress_percentage).toBeNull();
    expect(record.work_summary).toBe('two found');
    expect(checkpointRecordSchema.safeParse(record).success).toBe(true);
  });

  it('accepts what a Python agent writes (naive local time with microseconds, no warning status)', () => {
    const fromPython = {
      ...assessment,
      start_time: '2026-02-09T11:30:00',
      current_time: '2026-02-09T12:00:00.123456',
      time_status: 'time_critical',
    };
    expect(timeAssessmentSchema.safeParse(fromPython).success).toBe(true);
  });

  it('rejects a corrupt record, saying where', () => {
    const bad = {
      ...buildCheckpointRecord({ checkpointId: 'a_001', itemsAnalyzed: 1, assessment }),
      time_assessment: { ...assessment, time_status: 'late', elapsed_seconds: 1.5 },
    };
    const result = checkpointRecordSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.')).sort()).toEqual([
      'time_assessment.elapsed_seconds',
      'time_assessment.time_status',
    ]);
  });

  it('validates its input with messages that name the field', () => {
    expect(() => buildCheckpointRecord({ checkpointId: 'a', itemsAnalyzed: -1, assessment })).toThrow(
      'itemsAnalyzed must be an integer ≥ 0, got -1',
    );
    expect(() =>
      buildCheckpointRecord({ checkpointId: 'a', itemsAnalyzed: 1, itemsTotal: 0, assessment }),
    ).toThrow('itemsTotal must be an integer ≥ 1, got 0');
    expect(() => checkpointId('agent', 0)).toThrow('sequence must be an integer ≥ 1, got 0');
    expect(checkpointId('agent', 1234)).toBe('agent_1234');
  });

  it('has a schema whose output type is the record type', () => {
    expectTypeOf<z.output<typeof checkpointRecordSchema>>().toEqualTypeOf<CheckpointRecord>();
  });
});
