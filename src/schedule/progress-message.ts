import { ValidationError } from '../core/index.ts';
import { humanizeDuration } from './humanize-duration.ts';
import {
  checkOverlays,
  composeSystem,
  loadPromptTemplate,
  type PromptOverlays,
  type PromptTemplate,
  pickLanguage,
  renderTemplate,
} from './prompt-template.ts';
import type { ScheduleLanguage } from './schedule-input.ts';
import defaultTemplateJson from './templates/schedule_progress.json' with { type: 'json' };

/**
 * The humanized in-progress notice sent when a scheduled call is not done at its delivery time
 * (protocol: 人性化进度消息). A model writes it in the brand voice when one is given; otherwise, or
 * when the model fails, the template's plain message is used.
 */

/** The shipped `templates/schedule_progress.json`. */
export const DEFAULT_PROGRESS_TEMPLATE: PromptTemplate = loadPromptTemplate(defaultTemplateJson);

/** Used when a template has no plain message: friendly, no technical terms. */
export const DEFAULT_PROGRESS_MESSAGE: Readonly<Record<ScheduleLanguage, string>> = {
  en: "We're still working on it and need a little more time. Thanks for your patience!",
  zh: '正在为您处理中，还需要一些时间，请稍候~',
};

/** Writes a message from a system prompt and a user prompt (an LLM call). */
export type GenerateText = (system: string, prompt: string, signal?: AbortSignal) => Promise<string>;

export interface ProgressMessageInput {
  /** The tool's name, e.g. "local__image_draw"; the message describes it in plain words. */
  toolName: string;
  language: ScheduleLanguage;
  /** The promised delay (the schedule's delayMs). */
  scheduledDelayMs: number;
  /** Time since the call started. */
  elapsedMs: number;
  /** @default DEFAULT_PROGRESS_TEMPLATE */
  template?: PromptTemplate;
  overlays?: PromptOverlays;
  /** When given, a model writes the message; without it the template's message is rendered. */
  generate?: GenerateText;
  /** Passed to `generate`; when it fires, the abort reason is thrown instead of a message. */
  signal?: AbortSignal;
}

/** "local__image_draw" → "image draw": the task in words for the prompt. */
export function describeTool(toolName: string): string {
  const base = toolName.split('__').pop() ?? toolName;
  return base
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** The placeholders a progress template can use. */
export function progressVars(input: ProgressMessageInput): Record<string, string | number> {
  const { language, scheduledDelayMs, elapsedMs } = input;
  return {
    toolName: input.toolName,
    task: describeTool(input.toolName),
    language: language === 'zh' ? '中文' : 'English',
    scheduled: humanizeDuration(scheduledDelayMs, language),
    elapsed: humanizeDuration(elapsedMs, language),
    overdue: humanizeDuration(Math.max(0, elapsedMs - scheduledDelayMs), language),
  };
}

function check(input: ProgressMessageInput): void {
  checkOverlays(input?.overlays);
  if (typeof input?.toolName !== 'string')
    throw new ValidationError('toolName', 'a string', input?.toolName, { code: 'INVALID_OPTION' });
  if (input.language !== 'en' && input.language !== 'zh')
    throw new ValidationError('language', '"en" or "zh"', input.language, { code: 'INVALID_OPTION' });
  for (const field of ['scheduledDelayMs', 'elapsedMs'] as const) {
    const v = input[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new ValidationError(field, 'a non-negative number of milliseconds', v, {
        code: 'INVALID_OPTION',
      });
  }
}

/** Model output as a message: unquoted, one paragraph; null when unusable. */
function usable(text: unknown, input: ProgressMessageInput, maxLength: number): string | null {
  if (typeof text !== 'string') return null;
  const clean = text
    .trim()
    .replace(/^["'“”「『]+|["'“”」』]+$/g, '')
    .replace(/\s*\n+\s*/g, ' ')
    .trim();
  if (clean === '' || clean.length > maxLength || clean.includes('{{')) return null;
  if (input.toolName.includes('_') && clean.includes(input.toolName)) return null;
  return clean;
}

export async function progressMessage(input: ProgressMessageInput): Promise<string> {
  check(input);
  const { language } = input;
  const template = input.template ?? DEFAULT_PROGRESS_TEMPLATE;
  const vars = progressVars(input);
  // The brand's own notice wins over the template's: overlays apply with or without a model.
  const plain =
    pickLanguage(input.overlays?.schedule_progress_message, language) ??
    pickLanguage(template.message, language) ??
    DEFAULT_PROGRESS_MESSAGE[language];
  const fallback = renderTemplate(plain, vars).trim() || DEFAULT_PROGRESS_MESSAGE[language];
  if (!input.generate) return fallback;

  const system = composeSystem(template, input.overlays, language);
  const prompt = renderTemplate(pickLanguage(template.user, language) ?? '', vars);
  try {
    const text = usable(await input.generate(system, prompt, input.signal), input, template.maxLength);
    if (text) return text;
  } catch (err) {
    if (input.signal?.aborted) throw input.signal.reason ?? err;
    // A failing model must not cost the user the notice: use the plain message.
  }
  return fallback;
}
