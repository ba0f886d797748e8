import { describe, expect, it } from 'vitest';
import type { ValidationError } from '../core/index.ts';
import { parseDataReference, parseFallbackConfig } from './reference-schema.ts';
import { DefaultFallbacks, fallbackPlanFor } from './resolution-failure.ts';

// The three examples of protocol 002 section 2, verbatim.
const protocolExamples = [
  {
    ref_type: 'task_output',
    task_id: 'task_scholar_001',
    path: '$.atoms[*].content',
    filter: { field: 'atom_type', operator: 'eq', value: 'methodology' },
    transform: 'none',
  },
  {
    ref_type: 'file',
    path: '/workspace/papers/attention_is_all_you_need.pdf',
    format: 'pdf',
    encoding: 'utf-8',
    sections: ['abstract', 'introduction', 'methodology'],
  },
  {
    ref_type: 'db_query',
    table: 'knowledge_atoms',
    conditions: [
      { field: 'paper_id', operator: 'eq', value: 'paper_001' },
      { field: 'atom_type', operator: 'in', value: ['claim', 'evidence'] },
    ],
    select: ['atom_id', 'content', 'confidence'],
    order_by: { field: 'confidence', direction: 'desc' },
    limit: 50,
  },
];

function fieldOfError(fn: () => unknown): { field: string; code: string; message: string } {
  try {
    fn();
  } catch (err) {
    const e = err as ValidationError;
    return { field: e.field, code: e.code, message: e.message };
  }
  throw new Error('expected an error');
}

describe('data_reference validation', () => {
  it.each(protocolExamples)('accepts the protocol example for $ref_type unchanged', (example) => {
    expect(parseDataReference(example)).toEqual(example);
  });

  it('names the field and what was expected', () => {
    expect(fieldOfError(() => parseDataReference({ ref_type: 'task_output', task_id: 7 }))).toEqual({
      field: 'data_reference.task_id',
      code: 'REF_FORMAT_ERROR',
      message: 'data_reference.task_id must be a non-empty string, got 7',
    });
    expect(
      fieldOfError(() =>
        parseDataReference({
          ref_type: 'db_query',
          table: 't',
          conditions: [{ field: 'a', operator: 'gt', value: [] }],
        }),
      ).field,
    ).toBe('data_reference.conditions[0].value');
  });

  it('refuses fields the protocol does not define', () => {
    expect(fieldOfError(() => parseDataReference({ ...protocolExamples[1], sectoins: ['x'] })).field).toBe(
      'data_reference.sectoins',
    );
  });

  it('uses REF_FILTER_ERROR only when every problem is in the filter', () => {
    const badFilter = { ...protocolExamples[0], filter: { field: 'x', operator: 'near', value: 1 } };
    expect(fieldOfError(() => parseDataReference(badFilter)).code).toBe('REF_FILTER_ERROR');
    expect(fieldOfError(() => parseDataReference({ ...badFilter, task_id: '' })).code).toBe(
      'REF_FORMAT_ERROR',
    );
  });

  it('refuses a file path with a NUL byte', () => {
    expect(fieldOfError(() => parseDataReference({ ref_type: 'file', path: 'a\0.md' })).field).toBe(
      'data_reference.path',
    );
  });
});

describe('fallback_config', () => {
  it("fills the protocol's defaults", () => {
    expect(parseFallbackConfig({ strategy: 'retry' })).toEqual({
      strategy: 'retry',
      retry_count: 3,
      retry_delay_ms: 1000,
      on_final_failure: 'skip',
    });
  });

  it('refuses out-of-range values naming the field', () => {
    expect(fieldOfError(() => parseFallbackConfig({ strategy: 'retry', retry_delay_ms: -5 }))).toMatchObject({
      field: 'fallback_config.retry_delay_ms',
      code: 'INVALID_OPTION',
    });
    expect(fieldOfError(() => parseFallbackConfig({ strategy: 'ignore' })).field).toBe(
      'fallback_config.strategy',
    );
  });

  it('follows the protocol table by default and an explicit config for every code', () => {
    expect(fallbackPlanFor('REF_PERMISSION_DENIED', undefined).strategy).toBe('abort');
    expect(fallbackPlanFor('REF_PATH_INVALID', undefined).strategy).toBe('return_full_data');
    expect(DefaultFallbacks.REF_TIMEOUT).toMatchObject({
      strategy: 'retry',
      retryCount: 3,
      onFinalFailure: 'skip',
    });
    const config = parseFallbackConfig({ strategy: 'use_default', default_value: 'n/a' });
    expect(fallbackPlanFor('REF_PERMISSION_DENIED', config)).toMatchObject({
      strategy: 'use_default',
      defaultValue: 'n/a',
    });
  });
});
