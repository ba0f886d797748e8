/**
 * Context-window budgets per agent (protocol 002 §6.1). The protocol gives one `context_limits`
 * object and a per-agent table of input limit and data region. They combine as:
 *
 *   effective_data_limit = min( floor((max_input − reserved_system − reserved_instructions) × safety_margin),
 *                               data_region_tokens of the agent, when it has one )
 *
 * With the defaults that is (100000 − 5000 − 3000) × 0.9 = 82800 for every agent, capped by the
 * agent's data region: Scholar 80000, Code 75000, Validator 70000, Strategic_Critic 60000, while
 * Orchestrator and Knowledge_Vault (85K regions) keep 82800 — which is the limit the protocol's §7.2
 * example shows for task_vault_001. An agent missing from the table gets the formula alone.
 */

import { ValidationError } from '../core/index.ts';
import { expectInteger, expectObject, expectRatio, rejectUnknownKeys } from './validate-options.ts';

/** The protocol's `context_limits` object, with its derived fields filled in. */
export interface ContextLimits {
  max_input_tokens: number;
  max_output_tokens: number;
  reserved_for_system_prompt: number;
  reserved_for_instructions: number;
  available_for_data: number;
  safety_margin: number;
  effective_data_limit: number;
}

/** The inputs of `context_limits`; the derived fields may be given, but must then agree. */
export type ContextLimitsConfig = Partial<ContextLimits>;

/** One row of the per-agent table: any `context_limits` field plus the agent's data region. */
export interface AgentContextConfig extends ContextLimitsConfig {
  data_region_tokens?: number;
}

/** The limits in force for one agent. */
export interface AgentContextLimits extends ContextLimits {
  agent: string | null;
  data_region_tokens: number | null;
}

export const DEFAULT_CONTEXT_LIMITS = {
  max_input_tokens: 100_000,
  max_output_tokens: 16_000,
  reserved_for_system_prompt: 5_000,
  reserved_for_instructions: 3_000,
  safety_margin: 0.9,
} as const;

/** Protocol 002 §6.1, "各Agent的上下文分配". */
export const DEFAULT_AGENT_CONTEXT: Readonly<Record<string, AgentContextConfig>> = {
  Orchestrator: { max_input_tokens: 100_000, data_region_tokens: 85_000 },
  Scholar: { max_input_tokens: 100_000, data_region_tokens: 80_000 },
  Code: { max_input_tokens: 100_000, data_region_tokens: 75_000 },
  Validator: { max_input_tokens: 100_000, data_region_tokens: 70_000 },
  Knowledge_Vault: { max_input_tokens: 100_000, data_region_tokens: 85_000 },
  Strategic_Critic: { max_input_tokens: 100_000, data_region_tokens: 60_000 },
};

export interface ContextLimitsOptions {
  /** The shared `context_limits` object. @default DEFAULT_CONTEXT_LIMITS (protocol §6.1) */
  contextLimits?: ContextLimitsConfig;
  /**
   * Per-agent rows, merged over the defaults by agent name (a row replaces the default row of that
   * agent); `null` removes a default row. @default DEFAULT_AGENT_CONTEXT (protocol §6.1 table)
   */
  agents?: Record<string, AgentContextConfig | null>;
}

const LIMIT_KEYS = [
  'max_input_tokens',
  'max_output_tokens',
  'reserved_for_system_prompt',
  'reserved_for_instructions',
  'available_for_data',
  'safety_margin',
  'effective_data_limit',
] as const;

// 92000 × 0.9 is 82800.00000000001 in binary floating point; floor after a tiny nudge.
const floorTokens = (x: number) => Math.floor(x + 1e-6);

function buildLimits(config: AgentContextConfig, field: string, agent: string | null): AgentContextLimits {
  const num = (key: keyof ContextLimits & keyof typeof DEFAULT_CONTEXT_LIMITS, min: number) =>
    config[key] === undefined
      ? DEFAULT_CONTEXT_LIMITS[key]
      : expectInteger(config[key], `${field}.${key}`, min);
  const maxInput = num('max_input_tokens', 1);
  const maxOutput = num('max_output_tokens', 0);
  const reservedSystem = num('reserved_for_system_prompt', 0);
  const reservedInstructions = num('reserved_for_instructions', 0);
  const margin =
    config.safety_margin === undefined
      ? DEFAULT_CONTEXT_LIMITS.safety_margin
      : expectRatio(config.safety_margin, `${field}.safety_margin`);
  const available = maxInput - reservedSystem - reservedInstructions;
  if (available <= 0)
    throw new ValidationError(
      `${field}.max_input_tokens`,
      `greater than reserved_for_system_prompt + reserved_for_instructions (${reservedSystem + reservedInstructions})`,
      maxInput,
      { code: 'INVALID_OPTION' },
    );
  const region =
    config.data_region_tokens === undefined
      ? null
      : expectInteger(config.data_region_tokens, `${field}.data_region_tokens`, 1);
  const formula = floorTokens(available * margin);
  const effective = region === null ? formula : Math.min(formula, region);
  if (config.available_for_data !== undefined && config.available_for_data !== available)
    throw new ValidationError(
      `${field}.available_for_data`,
      `max_input_tokens − reserved_for_system_prompt − reserved_for_instructions = ${available}`,
      config.available_for_data,
      { code: 'INVALID_OPTION' },
    );
  if (config.effective_data_limit !== undefined && config.effective_data_limit !== effective)
    throw new ValidationError(
      `${field}.effective_data_limit`,
      `the derived limit ${effective} (available_for_data × safety_margin${region === null ? '' : ', capped by data_region_tokens'})`,
      config.effective_data_limit,
      { code: 'INVALID_OPTION' },
    );
  return {
    agent,
    max_input_tokens: maxInput,
    max_output_tokens: maxOutput,
    reserved_for_system_prompt: reservedSystem,
    reserved_for_instructions: reservedInstructions,
    available_for_data: available,
    safety_margin: margin,
    effective_data_limit: effective,
    data_region_tokens: region,
  };
}

/** Validates the limits once and returns a lookup by agent name (exact, case-sensitive). */
export function compileContextLimits(
  options: ContextLimitsOptions = {},
): (agent?: string) => AgentContextLimits {
  const shared = expectObject(options.contextLimits ?? {}, 'contextLimits');
  rejectUnknownKeys(shared, LIMIT_KEYS, 'contextLimits');
  const base = buildLimits(shared, 'contextLimits', null);
  // The derived fields of the shared object were checked against it; each agent derives its own.
  const { available_for_data: _a, effective_data_limit: _e, ...sharedInputs } = shared;
  const rows: Record<string, AgentContextConfig | null> = { ...DEFAULT_AGENT_CONTEXT };
  if (options.agents !== undefined) Object.assign(rows, expectObject(options.agents, 'agents'));
  const perAgent = new Map<string, AgentContextLimits>();
  for (const [agent, row] of Object.entries(rows)) {
    if (row === null) continue;
    const field = `agents.${agent}`;
    const obj = expectObject(row, field);
    rejectUnknownKeys(obj, [...LIMIT_KEYS, 'data_region_tokens'], field);
    perAgent.set(agent, buildLimits({ ...sharedInputs, ...obj }, field, agent));
  }
  return (agent) =>
    (agent === undefined ? undefined : perAgent.get(agent)) ?? { ...base, agent: agent ?? null };
}
