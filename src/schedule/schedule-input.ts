import { refuseUnknownKeys, ValidationError } from '../core/index.ts';
import { luxon } from './luxon.ts';

/** The protocol's `schedule` value in either form, checked and reduced to what the parser needs. */

export type ScheduleLanguage = 'en' | 'zh';

export interface ScheduleInput {
  /** The time expression, trimmed. */
  text: string;
  /** The field the expression came from, for error messages: `schedule` or `schedule.when`. */
  field: string;
  language?: ScheduleLanguage;
  timezone?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** "zh", "zh-CN", "EN-us" → the language; anything else → null. */
export function toLanguage(value: string): ScheduleLanguage | null {
  const m = /^(en|zh)(?:[-_][a-z0-9]+)*$/i.exec(value.trim());
  return m ? ((m[1] as string).toLowerCase() as ScheduleLanguage) : null;
}

// IANAZone.isValidZone builds an Intl.DateTimeFormat on every call (~0.2 ms): remember the answers.
const knownZones = new Map<string, boolean>();

function isZone(zone: string): boolean {
  let valid = knownZones.get(zone);
  if (valid === undefined) {
    valid = luxon().IANAZone.isValidZone(zone);
    if (knownZones.size < 1_000) knownZones.set(zone, valid);
  }
  return valid;
}

/** Throws TIMEZONE_INVALID naming `field` unless `zone` is a known IANA zone name. */
export function checkZone(zone: unknown, field: string): string {
  if (typeof zone !== 'string' || !isZone(zone))
    throw new ValidationError(field, 'an IANA time zone name such as "Asia/Shanghai" or "UTC"', zone, {
      code: 'TIMEZONE_INVALID',
    });
  return zone;
}

/** The server's own zone: used only when neither the call nor the schedule names one. */
export function systemZoneName(): string {
  return luxon().SystemZone.instance.name;
}

const SCHEDULE_OBJECT_KEYS = ['when', 'language', 'timezone'];

export function readScheduleInput(value: unknown): ScheduleInput {
  if (typeof value === 'string') return { text: value.trim(), field: 'schedule' };
  if (!isRecord(value))
    throw new ValidationError(
      'schedule',
      'a time expression string or an object { when, language?, timezone? }',
      value,
      { code: 'SCHEDULE_INVALID' },
    );
  // A typo must not be ignored: `timzone` would deliver in the server's zone, hours off.
  refuseUnknownKeys(value, SCHEDULE_OBJECT_KEYS, 'schedule', 'SCHEDULE_INVALID');
  const { when, language, timezone } = value;
  if (typeof when !== 'string' || when.trim() === '')
    throw new ValidationError('schedule.when', 'a non-empty string (a time expression)', when, {
      code: 'SCHEDULE_INVALID',
    });
  const input: ScheduleInput = { text: when.trim(), field: 'schedule.when' };
  if (language !== undefined) {
    const lang = typeof language === 'string' ? toLanguage(language) : null;
    if (!lang)
      throw new ValidationError('schedule.language', '"en" or "zh"', language, { code: 'SCHEDULE_INVALID' });
    input.language = lang;
  }
  if (timezone !== undefined) {
    if (typeof timezone !== 'string')
      throw new ValidationError('schedule.timezone', 'a string (an IANA time zone name)', timezone, {
        code: 'SCHEDULE_INVALID',
      });
    input.timezone = checkZone(timezone, 'schedule.timezone');
  }
  return input;
}
