/**
 * Scheduled delivery, the pure parts (protocol 004): reading a `schedule` value ("in 2 minutes",
 * "明天早上9点", ISO 8601, object form with a time zone) into an instant, the schedule-argument
 * helpers for tool schemas, and the humanized in-progress message. The engine holds results and
 * arms timers; it calls this module and passes `now` from its Clock.
 */

export { humanizeDuration } from './humanize-duration.ts';
export { detectLanguage, type ExpressionKind } from './parse-expression.ts';
export {
  ACCEPTED_FORMS,
  type ParsedSchedule,
  type ParseScheduleOptions,
  parseSchedule,
} from './parse-schedule.ts';
export {
  DEFAULT_PROGRESS_MESSAGE,
  DEFAULT_PROGRESS_TEMPLATE,
  type GenerateText,
  type ProgressMessageInput,
  progressMessage,
} from './progress-message.ts';
export {
  checkOverlays,
  composeSystem,
  type LocalizedText,
  loadPromptTemplate,
  type PromptOverlays,
  type PromptTemplate,
  renderTemplate,
} from './prompt-template.ts';
export { declaresSchedule, SCHEDULE_JSON_SCHEMA, splitSchedule } from './schedule-args.ts';
export { checkZone, type ScheduleLanguage } from './schedule-input.ts';
