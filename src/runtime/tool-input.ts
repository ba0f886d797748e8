/**
 * A tool's start (protocol 004): the `schedule` argument read and taken out of what the tool sees,
 * where its `tool_result` goes, the `args` event and the due-time timer.
 */
import { type NewEvent, newEvent } from '../core/index.ts';
import { hasReferences } from '../refs/index.ts';
import type { ParsedSchedule } from '../schedule/index.ts';
import type { TimerRecord } from '../store/index.ts';
import type { TaskDefinition } from './define-task.ts';
import type { Engine } from './engine.ts';
import { dueAtOnce, dueTimerId, type RunSchedule, type ToolResultTarget } from './scheduled-delivery.ts';

/**
 * Only a tool whose schema declares `schedule` accepts one (protocol 004); the schedule is read now,
 * relative to the start, and removed from the arguments the tool will see.
 */
export function scheduleInput(engine: Engine, task: TaskDefinition, args: unknown): ToolInput {
  // A tool (src/tools) carries prepareArgs; looked up structurally so the engine does not import tools.
  const prepareArgs = (task as Partial<SchedulableTask>).prepareArgs;
  if (typeof prepareArgs !== 'function') return { input: args, isTool: false };
  const prepared = prepareArgs(args, {
    now: engine.clock.now(),
    ...engine.scheduling,
    check: !hasReferences(args),
  });
  // The targets are fixed now, so whichever process finishes the run delivers to the same places.
  const deliverTo = {
    ...engine.delivery.channels,
    webhooks: engine.delivery.channels.webhooks.map((w) => ({ ...w })),
  };
  if (!prepared.schedule)
    return { input: prepared.args, toolResult: { aiName: task.name, deliverTo }, isTool: true };
  const { past: _past, ...schedule } = prepared.schedule;
  return { input: prepared.args, schedule: { ...schedule, aiName: task.name, deliverTo }, isTool: true };
}

/** A start's input after a tool's schedule was taken out of it; `toolResult` for an unscheduled tool. */
export interface ToolInput {
  input: unknown;
  schedule?: RunSchedule;
  toolResult?: ToolResultTarget;
  isTool: boolean;
}

/** What the engine needs of a tool definition (see src/tools `defineTool`). */
interface SchedulableTask {
  prepareArgs(
    args: unknown,
    options: { now: number; defaultTimezone?: string; horizonMs?: number; check?: boolean },
  ): { args: unknown; schedule?: ParsedSchedule };
}

/** The due-time timer, unless the due time had passed already (then the result goes out when ready). */
export function dueTimers(engine: Engine, runId: string, schedule: RunSchedule): TimerRecord[] {
  if (dueAtOnce(schedule)) return [];
  return [
    {
      id: dueTimerId(runId),
      runId,
      kind: 'delivery-due',
      dueAt: schedule.at,
      payload: { runId },
      createdAt: engine.clock.now(),
    },
  ];
}

export function argsEvent(
  runId: string,
  aiName: string,
  args: unknown,
  schedule: RunSchedule | undefined,
): NewEvent {
  return newEvent(runId, 'tool:args', {
    type: 'args',
    aiName,
    args,
    ...(schedule
      ? {
          schedule: {
            text: schedule.text,
            at: schedule.iso,
            delayMs: schedule.delayMs,
            language: schedule.language,
            timezone: schedule.timezone,
          },
        }
      : {}),
  });
}
