/**
 * A Baton run seen as an MCP task (task id = run id): its status, and a status message taken from
 * its last checkpoint (progress, items, time status) or from the question it waits on. Pure: the
 * task store reads the run, its checkpoint and its open decisions, and this decides what to say.
 */
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import type { OpenDecision } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';

export type McpTaskStatus = Task['status'];

/** What a client polls for: the run's status in MCP's five words. */
export function taskStatusOf(run: RunRecord, decisions: readonly OpenDecision[]): McpTaskStatus {
  switch (run.status) {
    case 'succeeded':
    case 'partial':
      // A partial run handed back what it found: a result to fetch, not a failure.
      return 'completed';
    case 'failed':
    case 'expired':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    default:
      return decisions.length > 0 ? 'input_required' : 'working';
  }
}

/** The fields of the protocol's checkpoint document a status line uses, read without trusting it. */
export interface CheckpointSummary {
  progressPercentage?: number;
  itemsAnalyzed?: number;
  timeStatus?: string;
  remainingSeconds?: number;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function summarizeCheckpoint(record: Record<string, unknown> | undefined): CheckpointSummary {
  if (!record) return {};
  const time =
    typeof record.time_assessment === 'object' && record.time_assessment !== null
      ? (record.time_assessment as Record<string, unknown>)
      : {};
  const out: CheckpointSummary = {};
  const pct = num(record.progress_percentage);
  if (pct !== undefined) out.progressPercentage = pct;
  const items = num(record.items_analyzed);
  if (items !== undefined) out.itemsAnalyzed = items;
  if (typeof time.time_status === 'string') out.timeStatus = time.time_status;
  const left = num(time.remaining_seconds);
  if (left !== undefined) out.remainingSeconds = left;
  return out;
}

/** The choices a question offers, as an elicitation form's single-select field. */
export function decisionForm(d: OpenDecision): {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<
      string,
      { type: 'string'; title: string; oneOf: Array<{ const: string; title: string }> }
    >;
    required: string[];
  };
} {
  const properties: Record<
    string,
    { type: 'string'; title: string; oneOf: Array<{ const: string; title: string }> }
  > = {
    choice: {
      type: 'string',
      title: 'Your decision',
      oneOf: d.request.choices.map((c) => ({ const: c.id, title: c.label })),
    },
  };
  // "Different mode" needs the mode to retry in; offered only when the menu has that choice.
  if (d.request.choices.some((c) => c.id === 'different_mode') && d.request.otherModes.length > 0)
    properties.mode = {
      type: 'string',
      title: 'Mode (for "different mode")',
      oneOf: d.request.otherModes.map((m) => ({ const: m, title: m })),
    };
  return {
    message: d.request.message,
    requestedSchema: { type: 'object', properties, required: ['choice'] },
  };
}

export interface TaskView {
  run: RunRecord;
  decisions: readonly OpenDecision[];
  checkpoint: Record<string, unknown> | undefined;
  findings: number;
  pollIntervalMs: number;
}

function statusMessageOf(v: TaskView, status: McpTaskStatus): string {
  const { run } = v;
  if (status === 'input_required') {
    const d = v.decisions[0] as OpenDecision;
    return `${d.request.message} Choices: ${d.request.choices.map((c) => c.id).join(', ')} (answer through tasks/result, or baton_decide {"run_id": "${d.runId}"}).`;
  }
  if (status === 'failed' || status === 'cancelled') {
    const e = run.error;
    return e ? `${run.name} ${run.status}: ${e.code}: ${e.message}` : `${run.name} ${run.status}`;
  }
  if (status === 'completed')
    return run.status === 'partial'
      ? `${run.name} ended with a partial result (${v.findings} finding(s))`
      : `${run.name} succeeded`;
  const cp = summarizeCheckpoint(v.checkpoint);
  const parts = [
    run.status === 'waiting' ? `waiting (${run.waitReason ?? 'unknown'})` : run.status,
    `attempt ${run.attempt}`,
  ];
  if (cp.progressPercentage !== undefined) parts.push(`${cp.progressPercentage}% done`);
  if (cp.itemsAnalyzed !== undefined) parts.push(`${cp.itemsAnalyzed} items`);
  parts.push(`${v.findings} finding(s)`);
  if (cp.timeStatus !== undefined) parts.push(cp.timeStatus);
  if (cp.remainingSeconds !== undefined) parts.push(`${cp.remainingSeconds} s left`);
  if (run.status === 'waiting' && run.waitReason === 'resume')
    parts.push('stopped at its invocation limit: call baton_resume to continue');
  return parts.join(', ');
}

/** The MCP task a run is. */
export function taskOf(v: TaskView): Task {
  const status = taskStatusOf(v.run, v.decisions);
  return {
    taskId: v.run.id,
    status,
    // MCP counts the TTL from creation; Baton keeps a run however long it works and starts its
    // retention when it ends, so the TTL is known (and finite) only then.
    ttl: v.run.expiresAt !== null ? Math.max(0, v.run.expiresAt - v.run.createdAt) : null,
    createdAt: new Date(v.run.createdAt).toISOString(),
    lastUpdatedAt: new Date(v.run.updatedAt).toISOString(),
    pollInterval: v.pollIntervalMs,
    statusMessage: statusMessageOf(v, status),
  };
}
