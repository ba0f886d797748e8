import { DEFAULT_AGENT_TIMEOUT_MS } from '../budget/index.ts';
import { ValidationError } from '../errors.ts';

/**
 * Per-mode attempt timeouts (protocol 001, "Default Timeouts"). They apply to each agent spawn,
 * not to a whole phase. Fast mode multiplies every mode timeout by `fastTimeoutFactor` (½); the
 * per-agent timeout of protocol 000 (2880 s) is a different budget, the ceiling for any one attempt
 * and for all attempts together, and fast mode leaves it alone.
 */

export interface ResearchMode {
  /** As messages print it ("Mode: External"). */
  label: string;
  timeoutMs: number;
}

export const RESEARCH_MODES: Readonly<Record<string, Readonly<ResearchMode>>> = Object.freeze({
  codebase: Object.freeze({ label: 'Codebase', timeoutMs: 60_000 }),
  docs: Object.freeze({ label: 'Docs', timeoutMs: 90_000 }),
  external: Object.freeze({ label: 'External', timeoutMs: 120_000 }),
  dual: Object.freeze({ label: 'Dual Research', timeoutMs: 180_000 }),
});

export const FAST_MODE_TIMEOUT_FACTOR = 0.5;

export interface ModeOptions {
  timeoutMs: number;
  /** @default the mode id */
  label?: string;
}

export interface TimeoutTableOptions {
  /** Added to (or replacing entries of) RESEARCH_MODES. */
  modes?: Readonly<Record<string, ModeOptions>>;
  /** @default 2_880_000 (48 min, protocol 000) */
  agentTimeoutMs?: number;
  /** @default 0.5 */
  fastTimeoutFactor?: number;
}

export interface TimeoutTable {
  readonly fast: boolean;
  /** Effective timeouts: already multiplied by the fast factor in fast mode. */
  readonly modes: Readonly<Record<string, Readonly<ResearchMode>>>;
  readonly agentTimeoutMs: number;
  readonly fastTimeoutFactor: number;
}

export function positiveMs(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))
    throw new ValidationError(field, 'a number of milliseconds > 0', value, { code: 'INVALID_OPTION' });
  return value;
}

/** The mode table for normal or fast mode, validated once; messages name `${field}.…`. */
export function resolveTimeouts(
  options: TimeoutTableOptions = {},
  fast = false,
  field = 'timeouts',
): TimeoutTable {
  const factor = options.fastTimeoutFactor ?? FAST_MODE_TIMEOUT_FACTOR;
  if (typeof factor !== 'number' || !(factor > 0 && factor <= 1))
    throw new ValidationError(`${field}.fastTimeoutFactor`, 'a number > 0 and ≤ 1', factor, {
      code: 'INVALID_OPTION',
    });
  const scale = fast ? factor : 1;
  const modes: Record<string, Readonly<ResearchMode>> = {};
  for (const [id, mode] of Object.entries(RESEARCH_MODES))
    modes[id] = Object.freeze({ label: mode.label, timeoutMs: mode.timeoutMs * scale });
  for (const [id, mode] of Object.entries(options.modes ?? {})) {
    const timeoutMs = positiveMs(mode?.timeoutMs, `${field}.modes.${id}.timeoutMs`);
    if (mode.label !== undefined && typeof mode.label !== 'string')
      throw new ValidationError(`${field}.modes.${id}.label`, 'a string', mode.label, {
        code: 'INVALID_OPTION',
      });
    modes[id] = Object.freeze({
      label: mode.label ?? RESEARCH_MODES[id]?.label ?? id,
      timeoutMs: timeoutMs * scale,
    });
  }
  return Object.freeze({
    fast,
    modes: Object.freeze(modes),
    agentTimeoutMs: positiveMs(options.agentTimeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS, `${field}.agentTimeoutMs`),
    fastTimeoutFactor: factor,
  });
}

/** A mode's effective timeout; an unknown mode is a ValidationError naming `field`. */
export function modeTimeoutMs(table: TimeoutTable, mode: string, field = 'mode'): number {
  return lookupMode(table, mode, field).timeoutMs;
}

export function lookupMode(table: TimeoutTable, mode: unknown, field = 'mode'): Readonly<ResearchMode> {
  const found = typeof mode === 'string' && Object.hasOwn(table.modes, mode) ? table.modes[mode] : undefined;
  if (found === undefined)
    throw new ValidationError(
      field,
      `one of ${Object.keys(table.modes)
        .map((m) => `"${m}"`)
        .join(', ')}`,
      mode,
      { code: 'INVALID_OPTION' },
    );
  return found;
}
