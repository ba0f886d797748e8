import { describe, expect, it } from 'vitest';
import { isBatonError, type ValidationError } from '../core/index.ts';
import {
  findReferences,
  pointerKey,
  referencedTaskIds,
  SKIPPED,
  substituteReferences,
} from './find-references.ts';

const scholarRef = { ref_type: 'task_output', task_id: 'task_scholar_001', path: '$.atoms' };
const validatorRef = { ref_type: 'task_output', task_id: 'task_validator_001' };
const fileRef = { ref_type: 'file', path: '/workspace/papers/transformer.pdf', format: 'pdf' };

const input = {
  data_references: [scholarRef, validatorRef, { data_reference: fileRef }],
  transfer_config: { mode: 'reference' },
  nested: {
    deep: [{ data_reference: scholarRef }],
    db: { data_reference: { ref_type: 'db_query', table: 'papers' } },
  },
};

describe('findReferences', () => {
  it('finds bare references in data_references and wrapped ones anywhere, in document order', () => {
    expect(findReferences(input).map((f) => [f.pointer.join('/'), f.ref.ref_type])).toEqual([
      ['data_references/0', 'task_output'],
      ['data_references/1', 'task_output'],
      ['data_references/2', 'file'],
      ['nested/deep/0', 'task_output'],
      ['nested/db', 'db_query'],
    ]);
  });

  it('fills defaults of the validated reference', () => {
    const [found] = findReferences({
      data_reference: { ref_type: 'db_query', table: 'papers', order_by: { field: 'year' } },
    });
    expect(found?.ref).toEqual({
      ref_type: 'db_query',
      table: 'papers',
      order_by: { field: 'year', direction: 'asc' },
    });
    expect(found?.pointer).toEqual([]);
  });

  it('takes a fallback_config written beside data_reference as the reference own', () => {
    const [found] = findReferences({
      x: { data_reference: validatorRef, fallback_config: { strategy: 'retry', retry_count: 1 } },
    });
    expect(found?.ref.fallback_config).toEqual({
      strategy: 'retry',
      retry_count: 1,
      retry_delay_ms: 1000,
      on_final_failure: 'skip',
    });
  });

  it.each([
    [{ data_references: [{ ref_type: 'task_output' }] }, 'input.data_references[0].task_id'],
    [{ a: { data_reference: { ref_type: 'file' } } }, 'input.a.path'],
    [{ data_references: ['task_scholar_001'] }, 'input.data_references[0]'],
    [{ a: { data_reference: validatorRef, extra: 1 } }, 'input.a.extra'],
    [
      {
        a: {
          data_reference: { ...validatorRef, fallback_config: { strategy: 'skip' } },
          fallback_config: {},
        },
      },
      'input.a.fallback_config',
    ],
  ])('refuses %j with REF_FORMAT_ERROR naming %s', (bad, field) => {
    try {
      findReferences(bad);
      expect.unreachable();
    } catch (err) {
      expect(isBatonError(err, 'REF_FORMAT_ERROR')).toBe(true);
      expect((err as ValidationError).field).toBe(field);
    }
  });

  it('reports a bad filter as REF_FILTER_ERROR', () => {
    const bad = { data_reference: { ...validatorRef, filter: { field: 'x', operator: 'in', value: 3 } } };
    expect(() => findReferences(bad)).toThrow(expect.objectContaining({ code: 'REF_FILTER_ERROR' }));
  });
});

describe('referencedTaskIds', () => {
  it('lists each task read through task_output once, for dependency edges', () => {
    expect(referencedTaskIds(input)).toEqual(['task_scholar_001', 'task_validator_001']);
    expect(referencedTaskIds({ prompt: 'no references' })).toEqual([]);
  });
});

describe('substituteReferences', () => {
  it('replaces references by pointer key and removes skipped ones, closing arrays up', () => {
    const resolved = new Map<string, unknown>([
      ['/data_references/0', ['atom']],
      ['/data_references/1', SKIPPED],
      ['/data_references/2', 'pdf text'],
      ['/nested/deep/0', { a: 1 }],
      ['/nested/db', SKIPPED],
    ]);
    expect(substituteReferences(input, resolved)).toEqual({
      data_references: [['atom'], 'pdf text'],
      transfer_config: { mode: 'reference' },
      nested: { deep: [{ a: 1 }] },
    });
    expect(input.data_references).toHaveLength(3);
  });

  it('leaves references missing from the map, and never replaces plain data at a listed pointer', () => {
    const out = substituteReferences(
      { a: { data_reference: validatorRef }, b: 'text' },
      new Map([['/b', 'x']]),
    );
    expect(out).toEqual({ a: { data_reference: validatorRef }, b: 'text' });
  });

  it('replaces a reference at the root', () => {
    expect(substituteReferences({ data_reference: validatorRef }, new Map([['', 42]]))).toBe(42);
  });

  it('keeps a "__proto__" key as data', () => {
    const raw = JSON.parse('{"__proto__": {"polluted": true}, "r": {"data_reference": {}}}');
    const out = substituteReferences(raw, new Map([['/r', 1]])) as Record<string, unknown>;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe('pointerKey', () => {
  it('encodes RFC 6901 pointers', () => {
    expect(pointerKey([])).toBe('');
    expect(pointerKey(['a/b', 'm~n', '0'])).toBe('/a~1b/m~0n/0');
  });
});
