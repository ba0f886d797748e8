import { ValidationError } from '../errors.ts';

/**
 * When to take a time checkpoint (protocol 000, "Checkpoint Timing"):
 *   1. after every N items (N per agent: the protocol's table below, or the task's own `every`);
 *   2. before every deep analysis;
 *   3. before every tool call (together with the `shouldSkip` check);
 *   4. after a tool call, if it took long.
 * "Long" is the shorter of 60 s and 10 % of the budget (when a budget is known): 60 s alone is lax
 * for a 5-minute budget (20 % of it) and 10 % alone is lax for a 75-minute one (7.5 minutes).
 */

export const DEFAULT_AGENT_TIMEOUT_MS = 2_880_000;

export interface AgentProfile {
  /** Checkpoint after every `every` items. */
  every: number;
  /** What an item is, for messages ("papers"). */
  unit: string;
  /** Per-agent timeout (protocol 000 "Timeout Configuration"). */
  timeoutMs: number;
}

/** The protocol's agents: intervals and the 2880 s (48 min) per-agent timeout. */
export const AGENT_PROFILES: Readonly<Record<string, Readonly<AgentProfile>>> = Object.freeze({
  'academic-researcher': Object.freeze({ every: 3, unit: 'papers', timeoutMs: DEFAULT_AGENT_TIMEOUT_MS }),
  'github-watcher': Object.freeze({ every: 2, unit: 'repositories', timeoutMs: DEFAULT_AGENT_TIMEOUT_MS }),
  'community-listener': Object.freeze({ every: 5, unit: 'discussions', timeoutMs: DEFAULT_AGENT_TIMEOUT_MS }),
});

export const CheckpointMoments = [
  'after_items',
  'before_deep_analysis',
  'before_tool_call',
  'after_tool_call',
] as const;
export type CheckpointMoment = (typeof CheckpointMoments)[number];

export const LONG_TOOL_CALL_MS = 60_000;
export const LONG_TOOL_CALL_BUDGET_FRACTION = 0.1;

export interface CheckpointPolicyOptions {
  /** A profile name from `profiles` (e.g. "github-watcher") supplying `every`, `unit` and the timeout. */
  agent?: string;
  /** Items between checkpoints; overrides the profile. @default the profile's, else 1 (every item) */
  every?: number;
  /** Item noun for messages. @default the profile's, else "items" */
  unit?: string;
  /** Per-agent timeout. @default the profile's, else 2_880_000 (48 min) */
  agentTimeoutMs?: number;
  /** The time budget, to scale "a long tool call". */
  budgetMs?: number;
  /** A tool call at least this long is followed by a checkpoint. @default min(60 s, 10 % of budgetMs) */
  longToolCallMs?: number;
  /** @default true */
  beforeDeepAnalysis?: boolean;
  /** @default true */
  beforeToolCall?: boolean;
  /** Profiles to look `agent` up in. @default AGENT_PROFILES */
  profiles?: Readonly<Record<string, Readonly<AgentProfile>>>;
}

export interface CheckpointPolicy {
  readonly every: number;
  readonly unit: string;
  readonly agentTimeoutMs: number;
  readonly longToolCallMs: number;
  /** True when a multiple of `every` lies in (sinceCount, count]: exact even when items arrive in batches. */
  afterItems(count: number, sinceCount?: number): boolean;
  beforeDeepAnalysis(): boolean;
  beforeToolCall(): boolean;
  afterToolCall(durationMs: number): boolean;
}

function positiveInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new ValidationError(field, 'an integer ≥ 1', value, { code: 'INVALID_OPTION' });
  return value;
}

function positiveMs(value: number, field: string): number {
  if (!(value > 0) || !Number.isFinite(value))
    throw new ValidationError(field, 'a finite number of milliseconds > 0', value, {
      code: 'INVALID_OPTION',
    });
  return value;
}

export function createCheckpointPolicy(
  options: CheckpointPolicyOptions = {},
  field = 'checkpoint',
): CheckpointPolicy {
  const profiles = options.profiles ?? AGENT_PROFILES;
  let profile: Readonly<AgentProfile> | undefined;
  if (options.agent !== undefined) {
    profile = Object.hasOwn(profiles, options.agent) ? profiles[options.agent] : undefined;
    if (profile === undefined && options.every === undefined)
      throw new ValidationError(
        `${field}.agent`,
        `one of ${Object.keys(profiles)
          .map((k) => `"${k}"`)
          .join(', ')} (or give ${field}.every)`,
        options.agent,
        { code: 'INVALID_OPTION' },
      );
  }
  const every = positiveInteger(options.every ?? profile?.every ?? 1, `${field}.every`);
  const budgetMs =
    options.budgetMs === undefined ? undefined : positiveMs(options.budgetMs, `${field}.budgetMs`);
  const longToolCallMs =
    options.longToolCallMs !== undefined
      ? positiveMs(options.longToolCallMs, `${field}.longToolCallMs`)
      : Math.min(
          LONG_TOOL_CALL_MS,
          budgetMs === undefined ? Infinity : budgetMs * LONG_TOOL_CALL_BUDGET_FRACTION,
        );
  const beforeDeep = options.beforeDeepAnalysis ?? true;
  const beforeTool = options.beforeToolCall ?? true;

  return Object.freeze({
    every,
    unit: options.unit ?? profile?.unit ?? 'items',
    agentTimeoutMs: positiveMs(
      options.agentTimeoutMs ?? profile?.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
      `${field}.agentTimeoutMs`,
    ),
    longToolCallMs,
    afterItems(count: number, sinceCount = count - 1): boolean {
      if (!Number.isInteger(count) || count < 0) throw new ValidationError('count', 'an integer ≥ 0', count);
      if (!Number.isInteger(sinceCount) || sinceCount > count)
        throw new ValidationError('sinceCount', `an integer ≤ count (${count})`, sinceCount);
      return Math.floor(count / every) > Math.floor(Math.max(0, sinceCount) / every);
    },
    beforeDeepAnalysis: () => beforeDeep,
    beforeToolCall: () => beforeTool,
    afterToolCall(durationMs: number): boolean {
      return durationMs >= longToolCallMs;
    },
  });
}
