import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { createContextPlanner } from './create-context-planner.ts';

describe('creating a context planner', () => {
  it('exposes the protocol limits and tables it was configured with', async () => {
    const planner = await createContextPlanner({
      agentLimits: { Writer: { data_region_tokens: 40_000 } },
      tables: { taskTypes: { Writer: 'summary' } },
    });
    expect(planner.effectiveLimit('Writer')).toBe(40_000);
    expect(planner.effectiveLimit('Knowledge_Vault')).toBe(82_800);
    expect(planner.limitsFor('Scholar')).toMatchObject({
      agent: 'Scholar',
      data_region_tokens: 80_000,
      effective_data_limit: 80_000,
    });
    expect(planner.tables.taskTypes.Writer).toBe('summary');
    expect(planner.tables.taskTypes.Scholar).toBe('full');
  });

  it('aborts planning when the signal has fired', async () => {
    const planner = await createContextPlanner();
    const ac = new AbortController();
    ac.abort(new Error('step cancelled'));
    await expect(
      planner.planContext({
        taskId: 't',
        agent: 'Scholar',
        inputs: [{ name: 'a', value: 'x' }],
        signal: ac.signal,
      }),
    ).rejects.toThrow('step cancelled');
  });

  it.each([
    [{ tables: { dataTypes: { code: { mode: 'shrink' } } } }, 'tables.dataTypes.code.mode'],
    [{ batch: { overlap_tokens: 40_000 } }, 'batch.overlap_tokens'],
    [{ batch: { max_batches: 0 } }, 'batch.max_batches'],
    [{ trim: { thresholds: { 2: 0.9, 3: 0.8, 4: 0.95 } } }, 'trim.thresholds'],
    [{ summary: { summary_ratio: 0 } }, 'summary.summary_ratio'],
    [{ summary: { strategy: 'llm' } }, 'summary.strategy'],
    [{ previewCount: -1 }, 'previewCount'],
    [{ onOverflow: 'ignore' }, 'onOverflow'],
    [{ summarizer: 'gpt' }, 'summarizer'],
    [{ defaultEncoding: 'o100k' }, 'defaultEncoding'],
    [{ contextLimits: { safety_margin: 0 } }, 'contextLimits.safety_margin'],
  ])('rejects options %j naming %s', async (options, field) => {
    const err = await createContextPlanner(options as never).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_OPTION')).toBe(true);
    expect((err as { field: string }).field).toBe(field);
  });

  it('rejects a bad transfer_config on planTransfer as bad input', async () => {
    const planner = await createContextPlanner();
    const err = await planner
      .planTransfer('text', { transferConfig: { batch_config: { batch_size_tokens: -1 } } } as never)
      .catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_INPUT')).toBe(true);
    expect((err as { field: string }).field).toBe('transferConfig.batch_config.batch_size_tokens');
  });
});
