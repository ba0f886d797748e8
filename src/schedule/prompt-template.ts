import { ValidationError } from '../core/index.ts';
import type { ScheduleLanguage } from './schedule-input.ts';

/**
 * Prompt templates in the protocol's style (`schedule_progress.json`): a system prompt, a user
 * prompt with `{{placeholders}}`, and a plain message used when no model writes one. Each text is
 * one string or one per language.
 */

export type LocalizedText = string | Readonly<Partial<Record<ScheduleLanguage, string>>>;

export interface PromptTemplate {
  readonly name: string;
  readonly description?: string;
  /** Instructions for the model; brand-voice overlays are appended by `composeSystem`. */
  readonly system: LocalizedText;
  /** The prompt sent to the model, with `{{placeholders}}`. */
  readonly user: LocalizedText;
  /** The message itself when no model writes it, with `{{placeholders}}`. */
  readonly message?: LocalizedText;
  /**
   * Longest message accepted from the model, in characters; a longer one is replaced by `message`.
   * @default 200
   */
  readonly maxLength: number;
}

export interface PromptOverlays {
  /** The brand voice shared by every prompt (`context.overlays.global`). */
  global?: string;
  /** Extra instructions for progress messages only (`context.overlays.schedule_progress`). */
  schedule_progress?: string;
  /**
   * The progress notice in the brand's own words, used when no model writes one (no LLM, or it
   * failed) — the voice overlays are instructions a model follows, so without a model the brand
   * speaks through this text. `{{placeholders}}` as in the template's `message`.
   * @default the template's `message`
   */
  schedule_progress_message?: LocalizedText;
}

/** Checks overlays given as an option; errors name the field (`overlays.global must be …`). */
export function checkOverlays(overlays: unknown, field = 'overlays'): PromptOverlays {
  if (overlays === undefined) return {};
  if (!isRecord(overlays))
    throw new ValidationError(
      field,
      'an object { global?, schedule_progress?, schedule_progress_message? }',
      overlays,
      {
        code: 'INVALID_OPTION',
      },
    );
  for (const [key, value] of Object.entries(overlays)) {
    if (key === 'schedule_progress_message') localized(value, `${field}.${key}`, false);
    else if (key !== 'global' && key !== 'schedule_progress')
      throw new ValidationError(
        `${field}.${key}`,
        'absent (the overlays are global, schedule_progress, schedule_progress_message)',
        value,
        { code: 'INVALID_OPTION' },
      );
    else if (value !== undefined && typeof value !== 'string')
      throw new ValidationError(`${field}.${key}`, 'a string', value, { code: 'INVALID_OPTION' });
  }
  return overlays as PromptOverlays;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function localized(value: unknown, field: string, required: boolean): LocalizedText | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value === 'string' && value.trim() !== '') return value;
  const expected = 'a non-empty string or an object { en?, zh? } of non-empty strings';
  if (!isRecord(value)) throw new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
  const out: Partial<Record<ScheduleLanguage, string>> = {};
  for (const [key, text] of Object.entries(value)) {
    if (key !== 'en' && key !== 'zh')
      throw new ValidationError(`${field}.${key}`, 'absent (only "en" and "zh" are known)', text, {
        code: 'INVALID_OPTION',
      });
    if (typeof text !== 'string' || text.trim() === '')
      throw new ValidationError(`${field}.${key}`, 'a non-empty string', text, { code: 'INVALID_OPTION' });
    out[key] = text;
  }
  if (Object.keys(out).length === 0)
    throw new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
  return out;
}

/** Checks a parsed template file; errors name the field (`template.user.zh must be …`). */
export function loadPromptTemplate(json: unknown): PromptTemplate {
  if (!isRecord(json))
    throw new ValidationError('template', 'an object { name?, system, user, message?, maxLength? }', json, {
      code: 'INVALID_OPTION',
    });
  const { name, description, maxLength } = json;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === ''))
    throw new ValidationError('template.name', 'a non-empty string', name, { code: 'INVALID_OPTION' });
  if (description !== undefined && typeof description !== 'string')
    throw new ValidationError('template.description', 'a string', description, { code: 'INVALID_OPTION' });
  if (maxLength !== undefined && !(Number.isInteger(maxLength) && (maxLength as number) > 0))
    throw new ValidationError('template.maxLength', 'a positive integer', maxLength, {
      code: 'INVALID_OPTION',
    });
  const message = localized(json.message, 'template.message', false);
  return {
    name: (name as string | undefined) ?? 'schedule_progress',
    ...(description === undefined ? {} : { description: description as string }),
    system: localized(json.system, 'template.system', true) as LocalizedText,
    user: localized(json.user, 'template.user', true) as LocalizedText,
    ...(message === undefined ? {} : { message }),
    maxLength: (maxLength as number | undefined) ?? 200,
  };
}

/** The text in `language`, falling back to the other language, then undefined. */
export function pickLanguage(
  text: LocalizedText | undefined,
  language: ScheduleLanguage,
): string | undefined {
  if (text === undefined || typeof text === 'string') return text;
  return text[language] ?? text[language === 'zh' ? 'en' : 'zh'];
}

/** The template's system prompt followed by the global brand voice and the progress overlay. */
export function composeSystem(
  template: PromptTemplate,
  overlays: PromptOverlays = {},
  language: ScheduleLanguage = 'en',
): string {
  return [pickLanguage(template.system, language), overlays.global, overlays.schedule_progress]
    .map((part) => part?.trim())
    .filter((part): part is string => !!part)
    .join('\n\n');
}

/** Replaces `{{name}}` (spaces allowed inside the braces); an unknown name becomes empty text. */
export function renderTemplate(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g, (_, name: string) =>
    Object.hasOwn(vars, name) ? String(vars[name]) : '',
  );
}
