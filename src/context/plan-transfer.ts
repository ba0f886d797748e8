/**
 * Planning one input: apply `priority_filter`, choose the mode (choose-transfer-mode.ts), build the
 * transfer object (build-transfers.ts).
 */

import {
  type Built,
  batchedTransfer,
  fullTransfer,
  type InputShape,
  priorityLookup,
  referenceTransfer,
  summaryTransfer,
  type TransferEngine,
} from './build-transfers.ts';
import { chooseTransferMode, type ModeDecision } from './choose-transfer-mode.ts';
import { describePriorityFilter, filterByPriority, type PriorityLevel } from './priority.ts';

export interface PlannedTransfer extends Built {
  /** Tokens of the value as given. */
  originalTokens: number;
  decision: ModeDecision;
  /** Set when `priority_filter` removed elements before planning. */
  filtered?: { filter: string; removed: number; tokens: number };
}

/** The plan plus the value it was built from (after priority_filter), for later re-planning. */
export interface DetailedPlan extends PlannedTransfer {
  working: unknown;
}

export async function planTransferDetailed(
  engine: TransferEngine,
  value: unknown,
  shape: InputShape & { taskType?: string | undefined },
): Promise<DetailedPlan> {
  const cfg = shape.transferConfig;
  const originalTokens = engine.counter.count(value, shape.agent);
  let working = value;
  let filtered: PlannedTransfer['filtered'];
  if (cfg.priority_filter) {
    const r = filterByPriority(
      value,
      new Set<PriorityLevel>(cfg.priority_filter),
      priorityLookup(engine.tables),
    );
    if (r.removed > 0) {
      working = r.value;
      filtered = {
        filter: describePriorityFilter(cfg.priority_filter),
        removed: r.removed,
        tokens: engine.counter.count(working, shape.agent),
      };
    }
  }
  const tokens = filtered?.tokens ?? originalTokens;
  let decision = chooseTransferMode(
    {
      tokens,
      taskType: shape.taskType ?? shape.agent,
      dataType: shape.dataType,
      explicitMode: cfg.mode,
      maxTokens: cfg.max_tokens,
      hasReference: shape.refInfo !== undefined,
    },
    engine.tables,
  );
  const batching = { ...engine.batch, ...cfg.batch_config };
  if (decision.mode === 'batched_reference' && batching.enabled === false)
    decision = {
      mode: shape.refInfo ? 'reference' : 'summary',
      by: decision.by,
      reason: `${decision.reason}; batching disabled`,
    };
  let built: Built;
  if (decision.mode === 'full') built = fullTransfer(engine, working, shape);
  else if (decision.mode === 'summary') built = await summaryTransfer(engine, working, shape);
  else if (decision.mode === 'reference' && shape.refInfo)
    built = referenceTransfer(engine, working, { ...shape, refInfo: shape.refInfo });
  else built = batchedTransfer(engine, working, shape);
  return { ...built, originalTokens, decision, working, ...(filtered ? { filtered } : {}) };
}
