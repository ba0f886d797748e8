/**
 * The protocols' research vocabulary in one preset (protocols 000, 001 and 003): research modes
 * with their timeouts (codebase 60 s, docs 90 s, external 120 s, dual 180 s), the per-agent timeout
 * cap (2880 s), the agents' checkpoint intervals (academic-researcher every 3 papers, github-watcher
 * every 2 repositories, community-listener every 5 discussions) and the degradation table. A task
 * opts in with `research: { … }`; without it a task gets the general defaults, whatever its name —
 * a general task called `github-watcher` no longer checkpoints every 2 items by surprise.
 */
import {
  AGENT_PROFILES,
  type DegradationTable,
  type DegradationTableOptions,
  defineDegradationTable,
  type ModeOptions,
  optionKeys,
  refuseUnknownKeys,
  type TimeThresholds,
  ValidationError,
} from '../core/index.ts';
import { type Duration, parseDuration } from '../time/index.ts';

/** A task that is one of the protocols' research agents. */
export interface ResearchOptions {
  /**
   * Research mode giving the default timeouts: codebase 60 s, docs 90 s, external 120 s, dual 180 s
   * (or one of `modes`). A run may override it (`start(…, { mode })`).
   */
  mode?: string;
  /** Extra or changed research modes: `{ name: { timeoutMs, label } }`. */
  modes?: Record<string, ModeOptions>;
  /**
   * The protocol agent whose checkpoint interval and item unit the task uses: academic-researcher
   * (every 3 papers), github-watcher (every 2 repositories), community-listener (every 5 discussions).
   * @default the task's name when it is one of them
   */
  agent?: string;
  /** The per-agent cap on any attempt. @default "2880s" */
  agentTimeout?: Duration;
  /** Changes to protocol 001's degradation table behind ctx.shouldSkip / ctx.tool. */
  degradation?: DegradationTableOptions;
}

const RESEARCH_KEYS = optionKeys<ResearchOptions>()('mode', 'modes', 'agent', 'agentTimeout', 'degradation');

/** What the preset resolves to, in the terms the task definition keeps. */
export interface ResolvedResearch {
  mode?: string;
  agent?: string;
  retry: { modes?: Record<string, ModeOptions>; agentTimeoutMs?: number };
  degradationOptions?: DegradationTableOptions;
}

function optionError(field: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(field, expected, value, { code: 'INVALID_OPTION' });
}

/** Checks `research` and resolves it; nothing of the preset applies when it is absent. */
export function resolveResearch(
  research: ResearchOptions | undefined,
  taskName: string,
  at: (field: string) => string,
): ResolvedResearch {
  if (research === undefined) return { retry: {} };
  if (typeof research !== 'object' || research === null || Array.isArray(research))
    throw optionError(at('research'), 'an object', research);
  refuseUnknownKeys(research, RESEARCH_KEYS, at('research'));
  const agent = research.agent ?? (Object.hasOwn(AGENT_PROFILES, taskName) ? taskName : undefined);
  if (agent !== undefined && !Object.hasOwn(AGENT_PROFILES, agent))
    throw optionError(
      at('research.agent'),
      `one of ${Object.keys(AGENT_PROFILES)
        .map((k) => `"${k}"`)
        .join(', ')}`,
      agent,
    );
  if (
    research.agentTimeout !== undefined &&
    parseDuration(research.agentTimeout, at('research.agentTimeout')) <= 0
  )
    throw optionError(at('research.agentTimeout'), 'greater than 0', research.agentTimeout);
  return {
    ...(research.mode !== undefined ? { mode: research.mode } : {}),
    ...(agent !== undefined ? { agent } : {}),
    retry: {
      ...(research.modes !== undefined ? { modes: research.modes } : {}),
      ...(research.agentTimeout !== undefined
        ? { agentTimeoutMs: parseDuration(research.agentTimeout, at('research.agentTimeout')) }
        : {}),
    },
    ...(research.degradation !== undefined ? { degradationOptions: research.degradation } : {}),
  };
}

/** The degradation table follows the task's time thresholds unless the preset's table sets its own. */
export function degradationOf(
  thresholds: Partial<TimeThresholds> | undefined,
  own: DegradationTableOptions | undefined,
  field: string,
): DegradationTable | undefined {
  if (!own && !thresholds) return undefined;
  const t = thresholds ?? {};
  const inherited = {
    ...(t.criticalSeconds !== undefined ? { criticalSeconds: t.criticalSeconds } : {}),
    ...(t.warningSeconds !== undefined ? { warningSeconds: t.warningSeconds } : {}),
  };
  return defineDegradationTable({ ...own, thresholds: { ...inherited, ...own?.thresholds } }, field);
}
