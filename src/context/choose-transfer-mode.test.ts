import { describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { chooseTransferMode, type ModeQuery } from './choose-transfer-mode.ts';
import { compileTransferTables, DEFAULT_TRANSFER_TABLES } from './transfer-tables.ts';

const tables = DEFAULT_TRANSFER_TABLES;
const choose = (q: Partial<ModeQuery> & { tokens: number }) =>
  chooseTransferMode({ hasReference: true, ...q }, tables);

describe('transfer mode decision (§5.4)', () => {
  it.each([
    [1_999, 'Knowledge_Vault', 'full'],
    [2_000, 'Knowledge_Vault', 'reference'],
    [50_000, 'Scholar', 'full'],
    [50_001, 'Scholar', 'batched_reference'],
  ] as const)('splits by size first: %i tokens for %s → %s', (tokens, taskType, mode) => {
    expect(choose({ tokens, taskType }).mode).toBe(mode);
  });

  it.each([
    ['Scholar', 'full'],
    ['Code', 'full'],
    ['Validator', 'summary'],
    ['Strategic_Critic', 'summary'],
    ['Orchestrator', 'summary'],
    ['Knowledge_Vault', 'reference'],
  ] as const)('in the middle band asks the task type (§5.2): %s → %s', (taskType, mode) => {
    expect(choose({ tokens: 20_000, taskType, dataType: 'text' })).toMatchObject({ mode, by: 'task_type' });
  });

  it('lets the data type refine only a summary need (§5.3)', () => {
    expect(choose({ tokens: 5_000, taskType: 'Validator', dataType: 'code' })).toMatchObject({
      mode: 'full',
      by: 'data_type',
    });
    expect(choose({ tokens: 5_000, taskType: 'Validator', dataType: 'relation_graph' }).mode).toBe(
      'reference',
    );
    expect(choose({ tokens: 5_000, taskType: 'Validator', dataType: 'metadata' }).mode).toBe('full');
    expect(choose({ tokens: 5_000, taskType: 'Scholar', dataType: 'relation_graph' }).mode).toBe('full');
    expect(choose({ tokens: 5_000, taskType: 'Knowledge_Vault', dataType: 'code' }).mode).toBe('reference');
  });

  it('uses the data type when the task type is unknown, and the size table when both are', () => {
    expect(choose({ tokens: 30_000, taskType: 'Writer', dataType: 'table' })).toMatchObject({
      mode: 'summary',
      by: 'data_type',
    });
    expect(choose({ tokens: 9_999, taskType: 'Writer' })).toMatchObject({
      mode: 'summary',
      by: 'size_table',
    });
    expect(choose({ tokens: 10_000, taskType: 'Writer' })).toMatchObject({
      mode: 'reference',
      by: 'size_table',
    });
  });

  it('summarizes instead of referencing when there is no data_reference to fetch from', () => {
    expect(choose({ tokens: 20_000, taskType: 'Knowledge_Vault', hasReference: false })).toMatchObject({
      mode: 'summary',
      by: 'no_reference',
    });
    expect(
      choose({ tokens: 20_000, taskType: 'Knowledge_Vault', dataType: 'code', hasReference: false }).mode,
    ).toBe('full');
  });

  it('obeys an explicit transfer_config.mode, except for data that is always passed in full', () => {
    expect(choose({ tokens: 500, taskType: 'Scholar', explicitMode: 'summary' })).toMatchObject({
      mode: 'summary',
      by: 'transfer_config',
    });
    expect(choose({ tokens: 90_000, dataType: 'instruction', explicitMode: 'reference' })).toMatchObject({
      mode: 'full',
      by: 'keep_full',
    });
  });

  it('turns an automatic full larger than max_tokens into a summary, or a reference for code', () => {
    expect(choose({ tokens: 6_000, taskType: 'Scholar', maxTokens: 5_000 })).toMatchObject({
      mode: 'summary',
      by: 'max_tokens',
    });
    expect(choose({ tokens: 6_000, taskType: 'Scholar', dataType: 'code', maxTokens: 5_000 }).mode).toBe(
      'reference',
    );
  });

  it('follows configured tables', () => {
    const custom = compileTransferTables({
      sizeThresholds: { fullBelow: 100 },
      taskTypes: { Writer: 'full', Validator: null },
    });
    expect(chooseTransferMode({ tokens: 500, taskType: 'Writer', hasReference: true }, custom).mode).toBe(
      'full',
    );
    expect(chooseTransferMode({ tokens: 500, taskType: 'Validator', hasReference: true }, custom).by).toBe(
      'size_table',
    );
  });

  it.each([
    [{ taskTypes: { Scholar: 'everything' } }, 'tables.taskTypes.Scholar'],
    [{ dataTypes: { code: { mode: 'compress' } } }, 'tables.dataTypes.code.mode'],
    [{ dataTypes: { claim: { priority: 7 } } }, 'tables.dataTypes.claim.priority'],
    [{ sizeThresholds: { fullBelow: 20_000 } }, 'tables.sizeThresholds'],
    [{ sizeThreshold: {} }, 'tables.sizeThreshold'],
  ])('rejects table config %j naming %s', (options, field) => {
    let caught: unknown;
    try {
      compileTransferTables(options as never);
    } catch (err) {
      caught = err;
    }
    expect(isBatonError(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as { field: string }).field).toBe(field);
  });
});
