import { ValidationError } from '../core/index.ts';

/**
 * The `schedule` tool argument. Only a tool whose input schema declares `schedule` accepts one,
 * and the argument is removed before the tool (or an external server) sees its arguments.
 */

/** The protocol's `schedule` property definition, to add to a tool's `inputSchema.properties`. */
export const SCHEDULE_JSON_SCHEMA = {
  oneOf: [
    {
      type: 'string',
      description: "当用户需要延迟处理/延迟反馈时使用：例如 '5分钟后'、'30秒后'、'明天09:00'、ISO 字符串。",
    },
    {
      type: 'object',
      properties: {
        when: { type: 'string', description: "时间表达：如 '5分钟后' / '明天09:00' / ISO 字符串" },
        language: { type: 'string', description: '语言标识，例如 zh|en（默认 zh）' },
        timezone: { type: 'string', description: 'IANA 时区名称，例如 Asia/Shanghai' },
      },
      additionalProperties: true,
    },
  ],
  description:
    '可选：当用户需要延迟处理/延迟反馈时使用；仅控制反馈时间，不延迟执行。若到点未完成，将先反馈进行中状态。',
} as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** True when `inputSchema` is a JSON Schema object whose `properties` declare `schedule`. */
export function declaresSchedule(inputSchema: unknown): boolean {
  if (!isRecord(inputSchema) || !Object.hasOwn(inputSchema, 'properties')) return false;
  const { properties } = inputSchema;
  return isRecord(properties) && Object.hasOwn(properties, 'schedule') && properties.schedule !== undefined;
}

/**
 * Splits the `schedule` argument off a tool call's arguments. The input is not changed; `schedule`
 * is present in the result only when the arguments had one.
 */
export function splitSchedule(args: Record<string, unknown>): {
  args: Record<string, unknown>;
  schedule?: unknown;
} {
  if (!isRecord(args)) throw new ValidationError('args', 'an object of tool arguments', args);
  if (!Object.hasOwn(args, 'schedule')) return { args: { ...args } };
  const { schedule, ...rest } = args;
  return schedule === undefined ? { args: rest } : { args: rest, schedule };
}
