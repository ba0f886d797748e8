/**
 * Planning all inputs of one step into the agent's context window, and the `context_management`
 * report (protocol 002 §7.2). Three phases, each recorded as report actions:
 *
 *   1. priority_filter (step or input transfer_config): inputs whose priority is not listed are
 *      dropped (`filter_by_priority`, to 0); array elements are filtered inside planTransfer.
 *   2. Transfer planning per input (§5 tables, choose-transfer-mode.ts): a summary, reference or
 *      batched plan is an action (`summarize`, `reference`, `batch`) from the input's size to the
 *      plan's. Inputs whose data type is `keepFull` (instructions) are passed as they are.
 *   3. If the planned total still exceeds the limit (or `trimming: 'always'`), §6.3 priority
 *      trimming (trim-by-priority.ts): level 1 compressed — first by dropping its own elements of
 *      priority 4, then 3 (`filter_by_priority`), then a summary to the target (`compress`), then a
 *      reference; level 2 summarized (`summarize`, or `reference` when it cannot be summarized);
 *      levels 3–4 skipped (`omit`). A shrink that would not make an input smaller is not applied.
 *
 * The report's arithmetic holds by construction (final = total − Σ reductions) and is checked by
 * checkContextReport in the tests and the bench.
 */

import { BatonError } from '../core/index.ts';
import {
  fullTransfer,
  type InputShape,
  priorityLookup,
  referenceTransfer,
  summaryTransfer,
  type TransferEngine,
  type TransferObject,
} from './build-transfers.ts';
import type { ModeDecision } from './choose-transfer-mode.ts';
import {
  buildContextReport,
  type ContextAction,
  type ContextActionName,
  type ContextManagementReport,
} from './context-report.ts';
import { checkContextRequest, type PlanContextRequest } from './context-request.ts';
import { planTransferDetailed } from './plan-transfer.ts';
import {
  describePriorityFilter,
  elementPriorities,
  filterByPriority,
  type PriorityLevel,
} from './priority.ts';
import { ratioFor } from './summary-config.ts';
import { type TrimOptions, trimByPriority } from './trim-by-priority.ts';

export interface PlannedInput {
  name: string;
  priority: PriorityLevel;
  dataType: string | null;
  originalTokens: number;
  tokens: number;
  /** The protocol transfer object; null when the input was dropped. */
  transfer: TransferObject | null;
  decision: ModeDecision | null;
  notes: string[];
}

export interface ContextPlan {
  inputs: PlannedInput[];
  report: ContextManagementReport;
  notes: string[];
}

export interface PlanContextOptions {
  trim: TrimOptions;
  /** 'throw' raises CONTEXT_OVERFLOW when the plan cannot fit. @default 'report' */
  onOverflow: 'report' | 'throw';
}

interface State extends PlannedInput {
  working: unknown;
  shape: InputShape;
  keepFull: boolean;
  compressible: boolean;
}

export async function planContext(
  engine: TransferEngine,
  req: PlanContextRequest,
  options: PlanContextOptions,
): Promise<ContextPlan> {
  checkContextRequest(req);
  req.signal?.throwIfAborted();
  const { tables, counter } = engine;
  const limit = engine.limits(req.agent).effective_data_limit;
  const actions: ContextAction[] = [];
  const record = (s: State, action: ContextActionName, tokens: number, filter?: string) => {
    actions.push({
      data: s.name,
      action,
      ...(filter ? { filter } : {}),
      original_tokens: s.tokens,
      reduced_tokens: tokens,
    });
    s.tokens = tokens;
  };
  const states: State[] = req.inputs.map((input) => {
    const rule = input.dataType === undefined ? undefined : tables.dataTypes[input.dataType];
    const tokens = counter.count(input.value, req.agent);
    const transferConfig = input.transferConfig ?? req.transferConfig ?? {};
    return {
      name: input.name,
      priority: input.priority ?? rule?.priority ?? tables.defaultPriority,
      dataType: input.dataType ?? null,
      originalTokens: tokens,
      tokens,
      transfer: { transfer_mode: 'full', data: input.value },
      decision: null,
      notes: [],
      working: input.value,
      shape: {
        agent: req.agent,
        dataType: input.dataType,
        refInfo: input.refInfo,
        signal: req.signal,
        transferConfig,
      },
      keepFull: rule?.keepFull === true,
      compressible: rule?.compressible !== false,
    };
  });
  const live = () => states.filter((s) => s.transfer !== null);
  const drop = (s: State, action: ContextActionName, filter?: string) => {
    record(s, action, 0, filter);
    s.transfer = null;
  };

  // 1 and 2: priority_filter on whole inputs, then the transfer mode of each input.
  for (const s of states) {
    if (s.keepFull) {
      s.decision = {
        mode: 'full',
        by: 'keep_full',
        reason: `data type ${s.dataType} is always passed in full`,
      };
      continue;
    }
    const filter = s.shape.transferConfig.priority_filter;
    if (filter && !filter.includes(s.priority)) {
      drop(s, 'filter_by_priority', describePriorityFilter(filter));
      continue;
    }
    const plan = await planTransferDetailed(engine, s.working, { ...s.shape, taskType: req.taskType });
    if (plan.filtered) record(s, 'filter_by_priority', plan.filtered.tokens, plan.filtered.filter);
    const mode = plan.transfer.transfer_mode;
    if (mode !== 'full')
      record(s, mode === 'summary' ? 'summarize' : mode === 'reference' ? 'reference' : 'batch', plan.tokens);
    Object.assign(s, {
      working: plan.working,
      transfer: plan.transfer,
      decision: plan.decision,
      notes: plan.notes,
    });
  }

  // 3: §6.3 trimming.
  req.signal?.throwIfAborted();
  const planned = () => live().reduce((n, s) => n + s.tokens, 0);
  const trimming = req.trimming ?? 'on_overflow';
  const trimmed = trimming === 'always' || (trimming === 'on_overflow' && planned() > limit);
  if (trimmed) {
    const byName = new Map(states.map((s) => [s.name, s]));
    const apply = (
      s: State,
      action: ContextActionName,
      built: { transfer: TransferObject; tokens: number; notes: string[] },
      filter?: string,
    ) => {
      if (built.tokens >= s.tokens) return false;
      record(s, action, built.tokens, filter);
      s.transfer = built.transfer;
      s.notes.push(...built.notes);
      return true;
    };
    const toReference = (s: State, target: number) =>
      s.shape.refInfo
        ? apply(
            s,
            'reference',
            referenceTransfer(engine, s.working, { ...s.shape, refInfo: s.shape.refInfo }, target),
          )
        : false;
    const lookup = priorityLookup(tables);
    const { decisions } = await trimByPriority(
      live().map((s) => ({ name: s.name, priority: s.priority, tokens: s.tokens, reducible: !s.keepFull })),
      limit,
      {
        compress: async (name, target) => {
          const s = byName.get(name)!;
          if (s.transfer?.transfer_mode === 'full') {
            const present = elementPriorities(s.working, lookup);
            for (const cutoff of [3, 2] as const) {
              if (s.tokens <= target || ![...present].some((p) => p > cutoff)) continue;
              const allowed = ([1, 2, 3] as const).filter((p) => p <= cutoff);
              const r = filterByPriority(s.working, new Set<PriorityLevel>(allowed), lookup);
              if (
                r.removed > 0 &&
                apply(
                  s,
                  'filter_by_priority',
                  fullTransfer(engine, r.value, s.shape),
                  describePriorityFilter(allowed),
                )
              )
                s.working = r.value;
            }
          }
          if (s.tokens > target && s.compressible)
            apply(s, 'compress', await summaryTransfer(engine, s.working, s.shape, target));
          if (s.tokens > target) toReference(s, target);
          return s.tokens;
        },
        summarize: async (name, target) => {
          const s = byName.get(name)!;
          if (s.compressible)
            apply(s, 'summarize', await summaryTransfer(engine, s.working, s.shape, target));
          if (s.tokens > target) toReference(s, target);
          return s.tokens;
        },
      },
      {
        ...options.trim,
        summaryRatio:
          options.trim.summaryRatio ??
          ratioFor(
            engine.summary,
            engine.summary.strategy ?? (engine.summarizer ? 'abstractive' : 'extractive'),
          ),
      },
    );
    for (const d of decisions) if (d.outcome === 'skipped') drop(byName.get(d.name)!, 'omit');
  }

  const report = buildContextReport({
    taskId: req.taskId,
    inputs: states.map((s) => ({ name: s.name, tokens: s.originalTokens, priority: s.priority })),
    limit,
    actions,
    trimmed,
  });
  const notes = states.flatMap((s) => s.notes.map((n) => `${s.name}: ${n}`));
  const cm = report.context_management;
  if (!cm.resolution.within_limit && options.onOverflow === 'throw')
    throw new BatonError(
      'CONTEXT_OVERFLOW',
      `task ${req.taskId}: ${cm.resolution.final_tokens} tokens do not fit the ${limit}-token limit of ${req.agent}`,
      {
        data: { report },
      },
    );
  const inputs = states.map(({ working: _w, shape: _s, keepFull: _k, compressible: _c, ...rest }) => rest);
  return { inputs, report, notes };
}
