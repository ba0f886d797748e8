import { ValidationError } from '../core/index.ts';
import { luxon } from './luxon.ts';
import { detectLanguage, type ExpressionKind, readExpression } from './parse-expression.ts';
import { NEGATIVE_OFFSET } from './reading.ts';
import {
  checkZone,
  readScheduleInput,
  type ScheduleLanguage,
  systemZoneName,
  toLanguage,
} from './schedule-input.ts';

export interface ParseScheduleOptions {
  /** Epoch ms: the reference instant, from the injected clock. */
  now: number;
  /**
   * IANA zone to read the expression in; it wins over the object form's `timezone`.
   * @default the object form's `timezone`, else `defaultTimezone`, else the system's zone
   */
  timezone?: string;
  /** @default the system's zone */
  defaultTimezone?: string;
  /**
   * The language of the schedule (progress messages use it); it wins over the object form's
   * `language`. The text is always read by the grammar of its own script.
   * @default the object form's `language`, else detected (CJK characters → 'zh', else 'en')
   */
  language?: ScheduleLanguage;
  /**
   * Read the text with this language's grammar only, not the one its script suggests
   * (`baton parse-time --lang`): "明天早上9点" read as English is refused.
   * @default the grammar of the text's own script
   */
  grammar?: ScheduleLanguage;
  /**
   * Latest accepted instant, as milliseconds after `now`; later → SCHEDULE_BEYOND_HORIZON.
   * @default one calendar year after `now` in the schedule's zone
   */
  horizonMs?: number;
}

export interface ParsedSchedule {
  /** Epoch ms of the delivery time. */
  at: number;
  /** ISO 8601 with the zone's offset, e.g. "2025-10-30T15:42:00.000+08:00". */
  iso: string;
  /** max(0, at - now): a time already past means deliver at once. */
  delayMs: number;
  language: ScheduleLanguage;
  timezone: string;
  kind: ExpressionKind;
  /** The expression as given (trimmed). */
  text: string;
  /** True when the expression named a time already past (then delayMs is 0). */
  past: boolean;
}

/** The accepted forms, quoted in every TIME_EXPRESSION_INVALID message (the protocol's list). */
export const ACCEPTED_FORMS =
  'a time expression: English "in 2 minutes", "in 30 seconds", "in 1 hour", "tomorrow 9am", ' +
  '"next Monday 10:00"; 中文 "2分钟后", "30秒后", "1小时后", "明天早上9点", "下周一上午10点"; ' +
  'or ISO 8601 "2025-10-30T15:00:00+08:00"';

function checkOptions(options: ParseScheduleOptions): void {
  if (typeof options?.now !== 'number' || !Number.isFinite(options.now))
    throw new ValidationError('now', 'epoch milliseconds (a finite number)', options?.now, {
      code: 'INVALID_OPTION',
    });
  const { horizonMs, language } = options;
  if (horizonMs !== undefined && !(typeof horizonMs === 'number' && horizonMs > 0 && horizonMs <= 8.64e15))
    throw new ValidationError('horizonMs', 'a positive number of milliseconds', horizonMs, {
      code: 'INVALID_OPTION',
    });
  if (language !== undefined && (typeof language !== 'string' || !toLanguage(language)))
    throw new ValidationError('language', '"en" or "zh"', language, { code: 'INVALID_OPTION' });
  const { grammar } = options;
  if (grammar !== undefined && (typeof grammar !== 'string' || !toLanguage(grammar)))
    throw new ValidationError('grammar', '"en" or "zh"', grammar, { code: 'INVALID_OPTION' });
}

/**
 * Reads the protocol's `schedule` value (string or `{ when, language?, timezone? }`) into the
 * instant it names, in the user's zone. Pure: time comes from `options.now`.
 * @example parseSchedule('明天早上9点', { now: clock.now(), timezone: 'Asia/Shanghai' }).delayMs
 */
export function parseSchedule(value: unknown, options: ParseScheduleOptions): ParsedSchedule {
  checkOptions(options);
  const input = readScheduleInput(value);
  const timezone =
    options.timezone !== undefined
      ? checkZone(options.timezone, 'timezone')
      : (input.timezone ??
        (options.defaultTimezone !== undefined
          ? checkZone(options.defaultTimezone, 'defaultTimezone')
          : systemZoneName()));
  const language =
    (options.language && toLanguage(options.language)) ?? input.language ?? detectLanguage(input.text);
  const now = luxon().DateTime.fromMillis(options.now, { zone: timezone });

  const result = readExpression(
    input.text,
    now,
    options.grammar === undefined ? undefined : (toLanguage(options.grammar) ?? undefined),
  );
  const horizon =
    options.horizonMs !== undefined ? options.now + options.horizonMs : now.plus({ years: 1 }).toMillis();
  const beyond = (at: string | null) => {
    const limit = luxon().DateTime.fromMillis(horizon, { zone: timezone }).toISO();
    return new ValidationError(input.field, `no later than ${limit} (the scheduling horizon)`, input.text, {
      code: 'SCHEDULE_BEYOND_HORIZON',
      data: { text: input.text, ...(at ? { at } : {}), horizon: limit },
    });
  };
  if (!result.ok && result.beyond) throw beyond(null);
  if (!result.ok && result.reason === NEGATIVE_OFFSET)
    // Understood and refused: one sentence of its own, not the list of accepted forms around it.
    throw new ValidationError(
      input.field,
      'a time ahead, not a negative offset — a positive one like "in 5 minutes" or "5分钟后"',
      input.text,
      { code: 'TIME_EXPRESSION_INVALID', data: { text: input.text, reason: 'negative offset' } },
    );
  if (!result.ok) {
    // The reason comes last, beside what the user wrote: "…, got \"before friday\"".
    const expected = result.reason ? `${ACCEPTED_FORMS} (${result.reason})` : ACCEPTED_FORMS;
    throw new ValidationError(input.field, expected, input.text, {
      code: 'TIME_EXPRESSION_INVALID',
      data: { text: input.text, ...(result.reason ? { reason: result.reason } : {}) },
    });
  }
  const at = result.at.toMillis();
  // An invalid DateTime (NaN) never passes: "in 999999 years" must not come back as { at: null }.
  if (!(at <= horizon)) throw beyond(result.at.isValid ? result.at.toISO() : null);
  return {
    at,
    iso: result.at.setZone(timezone).toISO() as string,
    delayMs: Math.max(0, at - options.now),
    language,
    timezone,
    kind: result.kind,
    text: input.text,
    past: at < options.now,
  };
}
