/**
 * Scheduled delivery (protocol 004): a tool starts at once; its result reaches the user at the
 * time they asked for. A result that is ready early is held (`waiting: delivery`) until the due
 * time; if the tool is still working when the time comes, a friendly in-progress notice
 * (`tool_choice`, status in_progress) goes out first and the result follows as soon as it exists.
 * Errors (a tool's own timeout) are delivered at once, never held. The protocol's `tool_result` and
 * `tool_choice` events are written in the same transaction as the run change, and so are the rows
 * for the other channels (callbacks, webhooks), one per channel with an idempotency key.
 */
import type { Logger } from 'pino';
import { type NewEvent, newEvent, type SerializedError } from '../core/index.ts';
import type { GenerateText, ParsedSchedule, PromptOverlays, PromptTemplate } from '../schedule/index.ts';
import { progressMessage } from '../schedule/index.ts';
import type { Effects, NewDelivery, RunRecord } from '../store/index.ts';
import {
  callbackChannel,
  callbackRoute,
  type DeliveryTargets,
  storedTargets,
  webhookRoute,
} from './delivery-routes.ts';
import { type RunOptions, runOptionsOf } from './run-options.ts';

/** What a run with a schedule keeps in its options. */
export interface RunSchedule extends Omit<ParsedSchedule, 'past'> {
  /** The tool's name as the planner called it (aiName). */
  aiName: string;
  /** Where its deliveries go, fixed when the run was created (absent in runs stored before). */
  deliverTo?: DeliveryTargets;
}

export interface ProgressOptions {
  template?: PromptTemplate;
  overlays?: PromptOverlays;
  /** An LLM that writes the notice from the template; without it the template is rendered. */
  generate?: GenerateText;
}

/** A delivery more than this late counts as late (it came due while Baton was down or busy). */
export const LATE_AFTER_MS = 1_000;

export function scheduleOf(run: RunRecord): RunSchedule | undefined {
  return runOptionsOf(run).schedule;
}

/** What a tool run without a schedule keeps: its result is still a `tool_result` (protocol 004). */
export interface ToolResultTarget {
  aiName: string;
  deliverTo: DeliveryTargets;
}

/** The tool name and targets of a run whose outcome is delivered as a `tool_result`, if it is one. */
function toolTargetOf(
  run: RunRecord,
  options: RunOptions = runOptionsOf(run),
): { aiName: string; deliverTo?: DeliveryTargets } | undefined {
  return options.schedule ?? options.toolResult;
}

/**
 * Whether the run's outcome goes out as a `tool_result`: a tool's run, scheduled or not. `options`:
 * the run's options when the caller has them decoded already.
 */
export function deliversToolResult(run: RunRecord, options?: RunOptions): boolean {
  return toolTargetOf(run, options) !== undefined;
}

/**
 * Whether the due time had passed when the tool was called: then there is nothing to hold and no
 * in-progress notice to send — the result goes out the moment it exists (004: 绝对时间已过，立刻反馈).
 */
export function dueAtOnce(s: RunSchedule): boolean {
  return s.delayMs === 0;
}

export function dueTimerId(runId: string): string {
  return `delivery-due:${runId}`;
}

function scheduled(s: RunSchedule) {
  return { text: s.text, at: s.iso, delayMs: s.delayMs, language: s.language, timezone: s.timezone };
}

/**
 * The rows for the channels other than the event stream, one per target stored with the run (a
 * run stored before targets were goes to the finishing process's own).
 */
function channelRows(
  run: RunRecord,
  kind: 'tool_result' | 'tool_choice',
  payload: Record<string, unknown>,
  fallback: DeliveryTargets,
): NewDelivery[] {
  const targets = storedTargets(toolTargetOf(run)?.deliverTo) ?? fallback;
  const rows: NewDelivery[] = [];
  const add = (channel: string, route: string, target: Record<string, unknown>) =>
    rows.push({
      id: `${run.id}:${kind}:${channel}`,
      runId: run.id,
      kind,
      channel,
      route,
      target,
      payload: { ...payload, idempotency_key: `${run.id}:${kind}:${channel}` },
      idempotencyKey: `${run.id}:${kind}:${channel}`,
    });
  if (targets.callback !== undefined)
    add(callbackChannel(targets.callback), callbackRoute(targets.callback), { callback: targets.callback });
  for (const w of targets.webhooks)
    add(`webhook:${w.name}`, webhookRoute(w.name, w.url), { name: w.name, url: w.url });
  return rows;
}

export interface ResultDelivery {
  events: NewEvent[];
  effects: Effects;
}

/**
 * The tool_result for a run's outcome, to write with the transition that ends the run. `late` says
 * the result reached the user more than LATE_AFTER_MS after a due time that was still ahead when the
 * tool was called (a tool that ran long, or a due time that passed while Baton was down); the
 * protocol's "工具延迟完成" log line is written only for a tool that finished after such a due time.
 */
export function resultDelivery(
  run: RunRecord,
  outcome: { status: 'succeeded' | 'partial' | 'failed'; output?: unknown; error?: SerializedError | null },
  now: number,
  channels: DeliveryTargets,
  log: Logger,
): ResultDelivery {
  const target = toolTargetOf(run) as { aiName: string };
  const s = scheduleOf(run);
  const overdue = s !== undefined && !dueAtOnce(s) && now > s.at;
  const payload: Record<string, unknown> = {
    type: 'tool_result',
    aiName: target.aiName,
    runId: run.id,
    status: outcome.status,
    ...(outcome.output !== undefined ? { result: outcome.output } : {}),
    ...(outcome.error ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}),
    ...(s ? { scheduled: scheduled(s) } : {}),
    delivered_at: new Date(now).toISOString(),
    late: overdue && now - (s?.at ?? now) > LATE_AFTER_MS,
  };
  // A held result delivered from `waiting: delivery` finished early, however late it goes out.
  if (s && overdue && run.status === 'running')
    log.info(
      { label: 'SCHEDULE', aiName: s.aiName, totalMs: now - (run.startedAt ?? run.createdAt) },
      'Schedule 延迟反馈: 工具延迟完成',
    );
  return {
    events: [newEvent(run.id, 'tool:result', payload as never)],
    effects: {
      deliveries: channelRows(run, 'tool_result', payload, channels),
      ...(s ? { cancelTimers: [dueTimerId(run.id)] } : {}),
    },
  };
}

/** The in-progress notice when the due time comes before the result. */
export async function progressDelivery(
  run: RunRecord,
  now: number,
  channels: DeliveryTargets,
  progress: ProgressOptions,
  log: Logger,
): Promise<ResultDelivery> {
  const s = scheduleOf(run) as RunSchedule;
  const message = await progressMessage({
    toolName: s.aiName,
    language: s.language,
    scheduledDelayMs: s.delayMs,
    elapsedMs: now - (run.startedAt ?? run.createdAt),
    ...progress,
  });
  const payload = {
    type: 'tool_choice',
    aiName: s.aiName,
    runId: run.id,
    status: 'in_progress',
    message,
    scheduled: scheduled(s),
    sent_at: new Date(now).toISOString(),
  };
  log.info({ label: 'SCHEDULE', aiName: s.aiName, delayMs: s.delayMs }, 'Schedule 延迟反馈: 发送中间状态');
  return {
    events: [newEvent(run.id, 'tool:choice', payload as never)],
    effects: { deliveries: channelRows(run, 'tool_choice', payload, channels) },
  };
}

export function logScheduleEnabled(log: Logger, s: RunSchedule): void {
  log.info(
    { label: 'SCHEDULE', aiName: s.aiName, scheduleText: s.text, delayMs: s.delayMs, targetISO: s.iso },
    'Schedule 延迟反馈启用',
  );
}

export function logFinishedEarly(log: Logger, s: RunSchedule, actualMs: number): void {
  log.info(
    { label: 'SCHEDULE', aiName: s.aiName, delayMs: s.delayMs, actualMs },
    'Schedule 延迟反馈: 工具已提前完成，延迟后反馈',
  );
}
