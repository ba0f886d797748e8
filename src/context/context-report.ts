/**
 * The `context_management` report (protocol 002 §7.2), built from what the planner did, and a
 * checker for its arithmetic: total = Σ inputs, overflow = max(0, total − limit),
 * final = total − Σ (original − reduced) over the actions, within_limit = final ≤ limit, and each
 * data item's actions chain (an action starts from the size the previous one left).
 */

import type { PriorityLevel } from './priority.ts';

export const ContextActions = [
  'filter_by_priority',
  'summarize',
  'compress',
  'reference',
  'batch',
  'omit',
] as const;
export type ContextActionName = (typeof ContextActions)[number];

export interface ContextAction {
  data: string;
  action: ContextActionName;
  /** The protocol's filter text, for filter_by_priority ("priority <= 2"). */
  filter?: string;
  original_tokens: number;
  reduced_tokens: number;
}

export type ResolutionStrategy = 'none' | 'transfer_planning' | 'priority_based_trimming';

export interface ContextManagement {
  task_id: string;
  total_input_data: Record<string, { tokens: number; priority: PriorityLevel }>;
  total_tokens: number;
  context_limit: number;
  overflow: number;
  resolution: {
    strategy: ResolutionStrategy;
    actions: ContextAction[];
    final_tokens: number;
    within_limit: boolean;
  };
}

export interface ContextManagementReport {
  context_management: ContextManagement;
}

export function buildContextReport(args: {
  taskId: string;
  inputs: ReadonlyArray<{ name: string; tokens: number; priority: PriorityLevel }>;
  limit: number;
  actions: readonly ContextAction[];
  trimmed: boolean;
}): ContextManagementReport {
  const total_input_data: ContextManagement['total_input_data'] = {};
  for (const i of args.inputs) total_input_data[i.name] = { tokens: i.tokens, priority: i.priority };
  const total = args.inputs.reduce((s, i) => s + i.tokens, 0);
  const reduced = args.actions.reduce((s, a) => s + (a.original_tokens - a.reduced_tokens), 0);
  const final = total - reduced;
  const strategy: ResolutionStrategy = args.trimmed
    ? 'priority_based_trimming'
    : args.actions.length > 0
      ? 'transfer_planning'
      : 'none';
  return {
    context_management: {
      task_id: args.taskId,
      total_input_data,
      total_tokens: total,
      context_limit: args.limit,
      overflow: Math.max(0, total - args.limit),
      resolution: {
        strategy,
        actions: [...args.actions],
        final_tokens: final,
        within_limit: final <= args.limit,
      },
    },
  };
}

/** Every arithmetic rule the report must satisfy; an empty list means it holds. */
export function checkContextReport(report: ContextManagementReport): string[] {
  const cm = report.context_management;
  const problems: string[] = [];
  const inputs = Object.entries(cm.total_input_data);
  const total = inputs.reduce((s, [, v]) => s + v.tokens, 0);
  if (cm.total_tokens !== total) problems.push(`total_tokens ${cm.total_tokens} ≠ Σ inputs ${total}`);
  const overflow = Math.max(0, cm.total_tokens - cm.context_limit);
  if (cm.overflow !== overflow) problems.push(`overflow ${cm.overflow} ≠ max(0, total − limit) ${overflow}`);
  const size = new Map(inputs.map(([name, v]) => [name, v.tokens]));
  let reductions = 0;
  for (const a of cm.resolution.actions) {
    const before = size.get(a.data);
    if (before === undefined) problems.push(`action on unknown data ${a.data}`);
    else if (before !== a.original_tokens)
      problems.push(`${a.data}: ${a.action} starts from ${a.original_tokens}, but the data was ${before}`);
    if (a.reduced_tokens < 0) problems.push(`${a.data}: reduced_tokens ${a.reduced_tokens} < 0`);
    size.set(a.data, a.reduced_tokens);
    reductions += a.original_tokens - a.reduced_tokens;
  }
  const final = cm.total_tokens - reductions;
  if (cm.resolution.final_tokens !== final)
    problems.push(`final_tokens ${cm.resolution.final_tokens} ≠ total − Σ reductions ${final}`);
  const sum = [...size.values()].reduce((s, n) => s + n, 0);
  if (cm.resolution.final_tokens !== sum)
    problems.push(`final_tokens ${cm.resolution.final_tokens} ≠ Σ final sizes ${sum}`);
  if (cm.resolution.within_limit !== cm.resolution.final_tokens <= cm.context_limit)
    problems.push(
      `within_limit ${cm.resolution.within_limit} disagrees with final ${cm.resolution.final_tokens} vs limit ${cm.context_limit}`,
    );
  return problems;
}
