import { BatonError, ValidationError } from '../core/index.ts';
import {
  type ParsedSchedule,
  parseSchedule,
  type ScheduleLanguage,
  splitSchedule,
} from '../schedule/index.ts';
import type { ToolArgs, ToolDefinition } from './define-tool.ts';

/**
 * The check of a tool call before anything is stored: the arguments are an object, a `schedule`
 * is given only to a tool that declares it and names a time we can read, and the other arguments
 * pass the tool's schema. Pure: `now` comes from the caller's Clock.
 */

export interface PrepareToolArgsOptions {
  /** Epoch ms the schedule is read against (the engine's `clock.now()`). */
  now: number;
  /**
   * IANA zone of the user; it wins over the object form's `timezone`.
   * @default the object form's `timezone`, else `defaultTimezone`
   */
  timezone?: string;
  /** @default the system's zone */
  defaultTimezone?: string;
  /** @default the object form's `language`, else detected from the text */
  language?: ScheduleLanguage;
  /** Latest accepted delivery, in ms after `now`. @default one calendar year */
  horizonMs?: number;
  /**
   * Check the arguments against the schema now. false when they still hold data references: the
   * tool checks them when it runs, after the references are resolved. @default true
   */
  check?: boolean;
}

export interface PreparedToolArgs<A extends object = ToolArgs> {
  /** The arguments without `schedule`: what the handler or an external tool server gets. */
  args: A;
  /** When to deliver the result; absent when the call had no `schedule`. */
  schedule?: ParsedSchedule;
}

/**
 * Errors: INVALID_INPUT (`args` not an object, or arguments failing the schema, with
 * `data.problems`), SCHEDULE_NOT_SUPPORTED, and parseSchedule's TIME_EXPRESSION_INVALID,
 * TIMEZONE_INVALID, SCHEDULE_INVALID and SCHEDULE_BEYOND_HORIZON.
 * @example prepareToolArgs(imageDraw, { prompt: '1girl', schedule: '2分钟后' }, { now: clock.now() })
 */
export function prepareToolArgs<A extends object>(
  tool: ToolDefinition<A, unknown>,
  args: unknown,
  options: PrepareToolArgsOptions,
): PreparedToolArgs<A> {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new ValidationError('args', 'an object of tool arguments', args);
  const split = splitSchedule(args as ToolArgs);
  const checked = (a: ToolArgs) => (options.check === false ? (a as A) : tool.checkArgs(a));
  if (split.schedule === undefined) return { args: checked(split.args) };
  if (!tool.tool.acceptsSchedule) throw scheduleNotSupported(tool.name);
  const schedule = parseSchedule(split.schedule, {
    now: options.now,
    ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
    ...(options.defaultTimezone !== undefined ? { defaultTimezone: options.defaultTimezone } : {}),
    ...(options.language !== undefined ? { language: options.language } : {}),
    ...(options.horizonMs !== undefined ? { horizonMs: options.horizonMs } : {}),
  });
  return { args: checked(split.args), schedule };
}

export function scheduleNotSupported(tool: string): BatonError {
  return new BatonError(
    'SCHEDULE_NOT_SUPPORTED',
    `tool "${tool}" does not accept schedule; its config.json must declare the schedule parameter (inputSchema.properties.schedule)`,
    { data: { tool, field: 'args.schedule' } },
  );
}
