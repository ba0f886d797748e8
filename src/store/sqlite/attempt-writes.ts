/** What a running attempt writes: memoized steps, checkpoints and partial findings, all fenced. */
import { BatonError, type NewEvent } from '../../core/index.ts';
import type { Fence, PartialRecord, StepRecord, StoredCheckpoint } from '../records.ts';
import { json, toCheckpoint, toPartial, toStep } from '../rows.ts';
import type { SqliteContext } from './sqlite-context.ts';

export function recordStep(
  ctx: SqliteContext,
  fence: Fence,
  step: Omit<StepRecord, 'runId' | 'createdAt'>,
  events: readonly NewEvent[],
): Promise<void> {
  const output = json(step.output);
  return ctx.write((scope) => {
    ctx.checkFence(fence);
    const info = ctx
      .stmt(
        'INSERT INTO steps (run_id, key, attempt, output, version, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .run(fence.runId, step.key, step.attempt, output, step.version, ctx.now());
    if (info.changes === 0)
      throw new BatonError('RUN_CONFLICT', `step "${step.key}" of run ${fence.runId} is already recorded`, {
        data: { runId: fence.runId, key: step.key },
      });
    ctx.appendEvents(scope, events);
  });
}

export function getSteps(ctx: SqliteContext, runId: string): Promise<StepRecord[]> {
  const rows = ctx.stmt('SELECT * FROM steps WHERE run_id = ? ORDER BY created_at, key').all(runId);
  return Promise.resolve((rows as Parameters<typeof toStep>[0][]).map(toStep));
}

export function saveCheckpoint(
  ctx: SqliteContext,
  fence: Fence,
  cp: Omit<StoredCheckpoint, 'runId' | 'seq' | 'createdAt'>,
  events: readonly NewEvent[],
): Promise<number> {
  const state = json(cp.state);
  const record = json(cp.record);
  return ctx.write((scope) => {
    ctx.checkFence(fence);
    const row = ctx
      .stmt(
        `INSERT INTO checkpoints (run_id, seq, attempt, state, record, version, created_at)
         VALUES (@run, (SELECT coalesce(max(seq), 0) + 1 FROM checkpoints WHERE run_id = @run), @attempt, @state,
                 @record, @version, @now) RETURNING seq`,
      )
      .get({ run: fence.runId, attempt: cp.attempt, state, record, version: cp.version, now: ctx.now() }) as {
      seq: number;
    };
    // Events may refer to the new sequence number; the runtime passes a placeholder of 0.
    ctx.appendEvents(
      scope,
      events.map((e) =>
        e.type === 'checkpoint:saved'
          ? { ...e, data: { ...(e.data as object), seq: row.seq } as typeof e.data }
          : e,
      ),
    );
    return row.seq;
  });
}

const CHECKPOINT_ROW = 'SELECT * FROM checkpoints WHERE run_id = ?';

export function getLastCheckpoint(ctx: SqliteContext, runId: string): Promise<StoredCheckpoint | undefined> {
  const row = ctx.stmt(`${CHECKPOINT_ROW} ORDER BY seq DESC LIMIT 1`).get(runId);
  return Promise.resolve(row ? toCheckpoint(row as Parameters<typeof toCheckpoint>[0]) : undefined);
}

export function listCheckpoints(ctx: SqliteContext, runId: string): Promise<StoredCheckpoint[]> {
  const rows = ctx.stmt(`${CHECKPOINT_ROW} ORDER BY seq`).all(runId);
  return Promise.resolve((rows as Parameters<typeof toCheckpoint>[0][]).map(toCheckpoint));
}

export function addPartial(
  ctx: SqliteContext,
  fence: Fence,
  attempt: number,
  findings: readonly unknown[],
  events: readonly NewEvent[],
): Promise<number> {
  const body = json(findings);
  return ctx.write((scope) => {
    ctx.checkFence(fence);
    const row = ctx
      .stmt(
        `INSERT INTO partials (run_id, seq, attempt, findings, created_at)
         VALUES (@run, (SELECT coalesce(max(seq), 0) + 1 FROM partials WHERE run_id = @run), @attempt, @body, @now)
         RETURNING seq`,
      )
      .get({ run: fence.runId, attempt, body, now: ctx.now() }) as { seq: number };
    ctx.appendEvents(scope, events);
    return row.seq;
  });
}

export function listPartials(ctx: SqliteContext, runId: string): Promise<PartialRecord[]> {
  const rows = ctx.stmt('SELECT * FROM partials WHERE run_id = ? ORDER BY seq').all(runId);
  return Promise.resolve((rows as Parameters<typeof toPartial>[0][]).map(toPartial));
}
