/**
 * `baton/ai`: durable AI SDK agents. Model calls become memoized steps (a crash never pays for the
 * same completion twice), tools run under the protocols' timeouts with growing retries and partial
 * results, the AI SDK's tool approval answered as a Baton decision, and a UI message stream is kept in the run's events so a chat UI reconnects with
 * `Last-Event-ID`. Uses the `ai` package Baton already depends on; `import 'baton'` never loads it.
 */
import { type LanguageModel, wrapLanguageModel } from 'ai';
import type { TaskContext } from '../runtime/index.ts';
import { durableModelMiddleware, type MemoOptions } from './model-memo.ts';

export { type DurableToolOptions, durableTools, type ToolTimeoutResult } from './durable-tools.ts';
export { callKey, canonicalJson, durableModelMiddleware, type MemoOptions } from './model-memo.ts';
export { approveToolCalls, type ToolApprovalOptions } from './tool-approval.ts';
export { recordUiStream, UI_EVENT_KIND, uiMessageStreamResponse } from './ui-stream.ts';

/** The model with every call memoized in this attempt's run. */
export function durableModel(
  model: Exclude<LanguageModel, string>,
  ctx: TaskContext,
  options: MemoOptions = {},
) {
  return wrapLanguageModel({
    model: model as Parameters<typeof wrapLanguageModel>[0]['model'],
    middleware: durableModelMiddleware(ctx, options),
  });
}
