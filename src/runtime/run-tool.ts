/**
 * `ctx.tool` as both contexts (in-process and in a worker thread) run it: the degradation decision,
 * the checkpoints the time-checkpoint protocol asks for around a tool call, and the events that say
 * what was skipped or degraded. The contexts differ only in how they record events and checkpoints.
 */
import type { Logger } from 'pino';
import type { ToolOptions } from './task-context.ts';
import type { TimeKeeper } from './time-keeper.ts';

export type ToolMoment = 'before_tool' | 'before_deep_analysis' | 'after_long_tool';

export interface ToolHooks {
  time: TimeKeeper;
  clock: { monotonic(): number };
  log: Logger;
  event(type: 'tool:skipped' | 'tool:degraded', detail: Record<string, string>): void;
  checkpoint(moment: ToolMoment): Promise<unknown>;
}

export async function runTool<T, C>(
  hooks: ToolHooks,
  kind: string,
  fn: () => T | Promise<T>,
  options: ToolOptions<C>,
): Promise<T | C | undefined> {
  const decision = hooks.time.shouldSkip(kind);
  const detail = {
    kind,
    name: options.name ?? kind,
    reason: decision.reason,
    alternative: decision.alternative,
    level: decision.level,
  };
  if (decision.action === 'skip' || (decision.action === 'cheap' && !options.cheap)) {
    hooks.event('tool:skipped', detail);
    hooks.log.info(detail, 'tool skipped');
    return undefined;
  }
  const policy = hooks.time.checkpoints;
  const deep = kind === 'deep_analysis';
  if (deep ? policy.beforeDeepAnalysis() : policy.beforeToolCall())
    await hooks.checkpoint(deep ? 'before_deep_analysis' : 'before_tool');
  const started = hooks.clock.monotonic();
  let value: T | C;
  if (decision.action === 'cheap' && options.cheap) {
    hooks.event('tool:degraded', detail);
    value = await options.cheap(decision);
  } else value = await fn();
  if (policy.afterToolCall(hooks.clock.monotonic() - started)) await hooks.checkpoint('after_long_tool');
  return value;
}
