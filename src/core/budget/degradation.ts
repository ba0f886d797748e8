import { ValidationError } from '../errors.ts';
import type { TimeAssessment } from './assess-time.ts';
import { DEFAULT_TIME_THRESHOLDS } from './assess-time.ts';

/**
 * Degradation as time runs out (protocol 000: `should_skip_tool` and the Degradation Strategy
 * Table), as a configurable table of rules per tool kind and level.
 *
 * `action` tells the engine's `ctx.tool(kind, fn, { cheap })` what to do:
 *   normal → run `fn`;  cheap → run `cheap` if the caller gave one, else nothing;  skip → run nothing.
 * `skip` is the Python's boolean: true whenever the full operation does not run (action ≠ normal).
 *
 * How the default table reconciles the Python with the protocol's table (the table wins where it
 * is explicit, the Python supplies the wording and the catch-all):
 * - download_full  < 300 s: ❌ skip (nothing runs; the abstract is already in hand from the search).
 *                300–600 s: ⚡ key items only → cheap; the Python also returns skip=True here.
 * - deep_analysis  < 300 s: ⚡ quick summary → cheap, with the Python's "Skip deep analysis" wording.
 *                300–600 s: ⚡ medium analysis → cheap. The Python proceeds normally here; the table
 *                is the more specific rule. One `cheap` covers both: it is told the level.
 * - search         < 300 s: ✅ "search only" → proceeds (the Python's catch-all would skip it).
 * - anything else  < 300 s: the Python's catch-all, "Use cached data or skip" → cheap (cached data
 *                if the caller has a cheap path, otherwise nothing runs); 300–600 s: proceeds.
 * The level is the more cautious of `time_status` and `remaining_seconds` against the thresholds,
 * so assessments written by other tools (the Python knows no `warning`) degrade the same way.
 */

export const DegradationLevels = ['critical', 'warning', 'normal'] as const;
export type DegradationLevel = (typeof DegradationLevels)[number];

export const DegradationActions = ['skip', 'cheap', 'normal'] as const;
export type DegradationAction = (typeof DegradationActions)[number];

export interface DegradationRule {
  action: DegradationAction;
  /** `{kind}` is replaced by the tool kind. */
  reason: string;
  alternative: string;
}

export interface DegradationDecision extends DegradationRule {
  skip: boolean;
  level: DegradationLevel;
}

export type DegradationRules = Record<string, Partial<Record<DegradationLevel, DegradationRule>>>;

/** What a task skips or shortens as its time runs out (protocol 001 degradation table). */
export interface DegradationTable {
  /** Seconds left below which a level applies. @default { criticalSeconds: 300, warningSeconds: 600 } */
  thresholds: { criticalSeconds: number; warningSeconds: number };
  /** Rules per tool kind; a level a kind leaves out comes from `general`, then from PROCEED. */
  rules: DegradationRules;
}

/** The table's "action" column: what the whole run does at each level. */
export const LEVEL_GUIDANCE: Readonly<Record<DegradationLevel, string>> = Object.freeze({
  critical: 'Wrap up immediately (立即收尾)',
  warning: 'Accelerate mode (加速模式)',
  normal: 'Normal flow (正常流程)',
});

const PROCEED: DegradationRule = Object.freeze({
  action: 'normal',
  reason: 'OK',
  alternative: 'Proceed normally',
});

export const DEFAULT_DEGRADATION_TABLE: Readonly<DegradationTable> = deepFreeze({
  thresholds: {
    criticalSeconds: DEFAULT_TIME_THRESHOLDS.criticalSeconds,
    warningSeconds: DEFAULT_TIME_THRESHOLDS.warningSeconds,
  },
  rules: {
    download_full: {
      critical: {
        action: 'skip',
        reason: 'TIME_CRITICAL: Skip full-text download',
        alternative: 'Use abstract only',
      },
      warning: {
        action: 'cheap',
        reason: 'ACCELERATE: Use abstract only',
        alternative: 'Prioritize key items only',
      },
    },
    deep_analysis: {
      critical: {
        action: 'cheap',
        reason: 'TIME_CRITICAL: Skip deep analysis',
        alternative: 'Quick summary only',
      },
      warning: {
        action: 'cheap',
        reason: 'ACCELERATE: Medium-depth analysis',
        alternative: 'Medium-depth analysis only',
      },
    },
    search: {
      critical: {
        action: 'normal',
        reason: 'TIME_CRITICAL: Search only',
        alternative: 'Search only, skip follow-up work',
      },
    },
    general: {
      critical: {
        action: 'cheap',
        reason: 'TIME_CRITICAL: Skip {kind}',
        alternative: 'Use cached data or skip',
      },
      warning: PROCEED,
      normal: PROCEED,
    },
  },
} satisfies DegradationTable);

/** The level for an assessment: the more cautious of its status and its remaining seconds. */
export function degradationLevel(
  assessment: Pick<TimeAssessment, 'remaining_seconds' | 'time_status'>,
  thresholds: DegradationTable['thresholds'] = DEFAULT_DEGRADATION_TABLE.thresholds,
): DegradationLevel {
  const remaining = assessment.remaining_seconds;
  if (assessment.time_status === 'time_critical' || remaining < thresholds.criticalSeconds) return 'critical';
  if (assessment.time_status === 'warning' || remaining < thresholds.warningSeconds) return 'warning';
  return 'normal';
}

/**
 * Whether to run a tool of `toolKind` now, its cheap alternative, or nothing (`should_skip_tool`).
 * @example shouldSkip(assessment, 'download_full') // < 300 s left: { skip: true, action: 'skip', … }
 */
export function shouldSkip(
  assessment: Pick<TimeAssessment, 'remaining_seconds' | 'time_status'>,
  toolKind: string,
  table: Readonly<DegradationTable> = DEFAULT_DEGRADATION_TABLE,
): DegradationDecision {
  const level = degradationLevel(assessment, table.thresholds);
  const rule = table.rules[toolKind]?.[level] ?? table.rules.general?.[level] ?? PROCEED;
  return {
    skip: rule.action !== 'normal',
    reason: withKind(rule.reason, toolKind),
    alternative: withKind(rule.alternative, toolKind),
    level,
    action: rule.action,
  };
}

function withKind(text: string, kind: string): string {
  return text.includes('{kind}') ? text.replaceAll('{kind}', kind) : text;
}

export interface DegradationTableOptions {
  thresholds?: Partial<DegradationTable['thresholds']>;
  /** Merged over the default rules kind by kind and level by level. */
  rules?: DegradationRules;
}

/** A table from the defaults plus overrides, validated once with messages that name the field. */
export function defineDegradationTable(
  options: DegradationTableOptions,
  field = 'degradation',
): DegradationTable {
  const thresholds = { ...DEFAULT_DEGRADATION_TABLE.thresholds, ...options.thresholds };
  const { criticalSeconds, warningSeconds } = thresholds;
  if (!(criticalSeconds >= 0) || !Number.isFinite(criticalSeconds))
    throw new ValidationError(`${field}.thresholds.criticalSeconds`, 'a finite number ≥ 0', criticalSeconds, {
      code: 'INVALID_OPTION',
    });
  if (!(warningSeconds >= criticalSeconds) || !Number.isFinite(warningSeconds))
    throw new ValidationError(
      `${field}.thresholds.warningSeconds`,
      `a finite number ≥ criticalSeconds (${criticalSeconds})`,
      warningSeconds,
      { code: 'INVALID_OPTION' },
    );
  const rules: DegradationRules = {};
  for (const [kind, levels] of Object.entries(DEFAULT_DEGRADATION_TABLE.rules)) rules[kind] = { ...levels };
  for (const [kind, levels] of Object.entries(options.rules ?? {})) {
    for (const [level, rule] of Object.entries(levels)) {
      const at = `${field}.rules.${kind}.${level}`;
      if (!(DegradationLevels as readonly string[]).includes(level))
        throw new ValidationError(
          `${field}.rules.${kind}`,
          `keyed by ${quoteAll(DegradationLevels)}`,
          level,
          {
            code: 'INVALID_OPTION',
          },
        );
      if (!(DegradationActions as readonly string[]).includes(rule?.action))
        throw new ValidationError(`${at}.action`, `one of ${quoteAll(DegradationActions)}`, rule?.action, {
          code: 'INVALID_OPTION',
        });
      for (const key of ['reason', 'alternative'] as const)
        if (typeof rule[key] !== 'string')
          throw new ValidationError(`${at}.${key}`, 'a string', rule[key], { code: 'INVALID_OPTION' });
      rules[kind] = { ...rules[kind], [level]: { ...rule } };
    }
  }
  return { thresholds, rules };
}

// The default table is shared by every caller; frozen all the way down so no one can edit it for all.
function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value))
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner);
  return Object.freeze(value);
}

function quoteAll(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}
