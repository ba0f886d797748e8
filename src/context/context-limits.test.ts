import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { compileContextLimits } from './context-limits.ts';

describe('context limits', () => {
  it('derives the protocol’s 82800 from (100000 − 5000 − 3000) × 0.9', () => {
    const limits = compileContextLimits();
    expect(limits('SomeOtherAgent')).toMatchObject({
      max_input_tokens: 100_000,
      available_for_data: 92_000,
      safety_margin: 0.9,
      effective_data_limit: 82_800,
      data_region_tokens: null,
    });
    expect(limits().effective_data_limit).toBe(82_800);
  });

  it('caps each agent by its data region from the §6.1 table', () => {
    const limits = compileContextLimits();
    const effective = Object.fromEntries(
      ['Orchestrator', 'Scholar', 'Code', 'Validator', 'Knowledge_Vault', 'Strategic_Critic'].map((a) => [
        a,
        limits(a).effective_data_limit,
      ]),
    );
    expect(effective).toEqual({
      Orchestrator: 82_800,
      Scholar: 80_000,
      Code: 75_000,
      Validator: 70_000,
      Knowledge_Vault: 82_800,
      Strategic_Critic: 60_000,
    });
  });

  it('accepts the protocol object as written, derived fields included', () => {
    const limits = compileContextLimits({
      contextLimits: {
        max_input_tokens: 100000,
        max_output_tokens: 16000,
        reserved_for_system_prompt: 5000,
        reserved_for_instructions: 3000,
        available_for_data: 92000,
        safety_margin: 0.9,
        effective_data_limit: 82800,
      },
    });
    expect(limits('Scholar').effective_data_limit).toBe(80_000);
  });

  it('applies overrides per agent and removes a row given null', () => {
    const limits = compileContextLimits({
      contextLimits: { max_input_tokens: 200_000 },
      agents: { Scholar: { data_region_tokens: 50_000 }, Code: null, Writer: { safety_margin: 0.5 } },
    });
    expect(limits('Scholar').effective_data_limit).toBe(50_000);
    expect(limits('Code').effective_data_limit).toBe(Math.floor(192_000 * 0.9));
    expect(limits('Writer').effective_data_limit).toBe(96_000);
  });

  it.each([
    [{ contextLimits: { effective_data_limit: 90000 } }, 'contextLimits.effective_data_limit'],
    [{ contextLimits: { available_for_data: 1 } }, 'contextLimits.available_for_data'],
    [{ contextLimits: { safety_margin: 1.5 } }, 'contextLimits.safety_margin'],
    [{ contextLimits: { safety_margn: 0.9 } }, 'contextLimits.safety_margn'],
    [
      { contextLimits: { reserved_for_system_prompt: 99_000, reserved_for_instructions: 1_000 } },
      'contextLimits.max_input_tokens',
    ],
    [{ agents: { Scholar: { data_region_tokens: -5 } } }, 'agents.Scholar.data_region_tokens'],
    [{ agents: { Scholar: 'big' } }, 'agents.Scholar'],
  ])('rejects invalid config %j naming %s', (options, field) => {
    let caught: unknown;
    try {
      compileContextLimits(options as never);
    } catch (err) {
      caught = err;
    }
    expect(isBatonError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { field: string }).field).toBe(field);
  });
});
