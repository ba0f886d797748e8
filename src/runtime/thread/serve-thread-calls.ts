/**
 * The parent's half of the bridge: every context call, progress report, event and log line the
 * thread sends is applied to the attempt's AttemptContext, which fences the store writes. A call the
 * context refuses (a reused step key, a write after the attempt ended) is answered with its error,
 * which the thread rethrows with the same code.
 */
import { BatonError, type BatonEventMap, serializeError } from '../../core/index.ts';
import type { AttemptContext, Moment } from '../attempt-context.ts';
import type { CheckpointInfo } from '../task-context.ts';
import { writeForwardedLine } from './thread-logger.ts';
import {
  type CallName,
  type ParentToThread,
  THREAD_EVENT_TYPES,
  type ThreadToParent,
} from './thread-messages.ts';

const MOMENTS: readonly string[] = [
  'explicit',
  'before_tool',
  'before_deep_analysis',
  'after_long_tool',
] satisfies Moment[];

function callContext(ctx: AttemptContext, name: CallName, args: unknown[]): unknown {
  switch (name) {
    case 'stepLookup':
      return ctx.stepLookup(args[0] as string);
    case 'stepRecord':
      return ctx.stepRecord(args[0] as string, args[1], Number(args[2]));
    case 'checkpoint':
      return ctx.checkpoint(args[0], (args[1] ?? {}) as CheckpointInfo);
    case 'checkpointAt': {
      const moment = MOMENTS.includes(String(args[0])) ? (args[0] as Moment) : 'explicit';
      // The state is the one last saved, which the parent knows: it is not sent again.
      return ctx.checkpointAt(ctx.lastState, { itemsAnalyzed: Number(args[1]) }, moment);
    }
    case 'partial':
      return ctx.partial(...(Array.isArray(args[0]) ? args[0] : []));
    case 'fetch':
      return ctx.fetch(args[0]);
    case 'sleep': {
      const r = (args[0] ?? {}) as { duration?: number | string; until?: number; key?: string };
      const options = typeof r.key === 'string' ? { key: r.key } : {};
      return r.until !== undefined ? ctx.sleepUntil(r.until, options) : ctx.sleep(r.duration ?? 0, options);
    }
    default:
      throw new BatonError('INVALID_INPUT', `the task thread made an unknown context call: ${String(name)}`);
  }
}

export interface ThreadBridge {
  ctx: AttemptContext;
  /** The attempt logger's bindings, which the thread's lines repeat. */
  bindings: Record<string, unknown>;
  reply(message: ParentToThread): void;
}

/** Applies one message from the thread (anything but `done`). */
export function serveThreadMessage(
  bridge: ThreadBridge,
  message: Exclude<ThreadToParent, { type: 'done' }>,
): void {
  const { ctx } = bridge;
  switch (message.type) {
    case 'call': {
      const { id, name, args } = message;
      Promise.resolve()
        .then(() => callContext(ctx, name, Array.isArray(args) ? args : []))
        .then(
          (value) => bridge.reply({ type: 'reply', id, ok: true, value }),
          (err: unknown) => bridge.reply({ type: 'reply', id, ok: false, error: serializeError(err) }),
        );
      return;
    }
    case 'progress':
      ctx.progress(message.done, message.total);
      return;
    case 'event':
      if (message.event === 'time:mode_changed') {
        // The parent's TimeKeeper notices the same change on its next assessment and would report
        // it again; let it notice now instead, so the change is recorded once.
        ctx.time.assess();
      } else if ((THREAD_EVENT_TYPES as readonly string[]).includes(message.event)) {
        ctx.emitEvent(message.event, message.data as BatonEventMap['tool:skipped']);
      }
      return;
    case 'log':
      writeForwardedLine(ctx.log, bridge.bindings, message.line);
      return;
  }
}
