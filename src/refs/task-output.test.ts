import { describe, expect, it } from 'vitest';
import { ManualClock } from '../time/index.ts';
import { createResolver, type Resolution } from './resolver.ts';
import type { TaskOutputRecord } from './task-output.ts';

const scholar = {
  atoms: [
    {
      atom_id: 'a1',
      atom_type: 'claim',
      content: 'Transformers parallelise.',
      confidence: 0.95,
      tags: ['core'],
    },
    { atom_id: 'a2', atom_type: 'methodology', content: 'Self-attention.', confidence: 0.7, tags: [] },
    {
      atom_id: 'a3',
      atom_type: 'claim',
      content: 'Attention is all you need.',
      confidence: 0.85,
      tags: ['key'],
    },
    { atom_id: 'a4', atom_type: 'evidence', content: 'BLEU 28.4', confidence: 0.6 },
  ],
  metadata: { quality_score: 0.9, source: { section: '3.1' } },
};

function setup(
  tasks: Record<string, TaskOutputRecord> = { scholar: { status: 'succeeded', output: scholar } },
) {
  const clock = new ManualClock();
  const resolver = createResolver({
    clock,
    getTaskOutput: async (id) => tasks[id] ?? { status: 'missing' },
  });
  return { clock, resolver };
}

const ids = (r: Resolution) =>
  r.ok || r.value ? (r.value as Array<{ atom_id: string }>).map((a) => a.atom_id) : [];
const ref = (extra: Record<string, unknown>) => ({ ref_type: 'task_output', task_id: 'scholar', ...extra });

describe('task_output paths', () => {
  it('returns the whole output without a path', async () => {
    const r = await setup().resolver.resolveReference(ref({}));
    expect(r).toEqual({ ok: true, value: scholar, attempts: 1 });
  });

  it('unwraps a singular path to its value and keeps a wildcard path as an array', async () => {
    const { resolver } = setup();
    expect(await resolver.resolveReference(ref({ path: '$.metadata.quality_score' }))).toMatchObject({
      ok: true,
      value: 0.9,
    });
    expect(await resolver.resolveReference(ref({ path: '$.atoms[0]' }))).toMatchObject({
      value: scholar.atoms[0],
    });
    expect(await resolver.resolveReference(ref({ path: '$.atoms[*].atom_id' }))).toMatchObject({
      value: ['a1', 'a2', 'a3', 'a4'],
    });
  });

  it('selects atoms with the protocol filter path $.atoms[?(@.confidence>0.8)]', async () => {
    const r = await setup().resolver.resolveReference(ref({ path: '$.atoms[?(@.confidence>0.8)]' }));
    expect(ids(r)).toEqual(['a1', 'a3']);
  });

  it('is REF_NOT_FOUND with the default null when a singular path selects nothing', async () => {
    const r = await setup().resolver.resolveReference(ref({ path: '$.metadata.missing' }));
    expect(r).toMatchObject({
      ok: false,
      value: null,
      failure: { error_code: 'REF_NOT_FOUND', fallback_strategy: 'use_default', fallback_value: null },
    });
  });

  it('returns the full output, recorded as REF_PATH_INVALID, for an invalid JSONPath', async () => {
    const r = await setup().resolver.resolveReference(ref({ path: '$.atoms[?(@.confidence>)]' }));
    expect(r).toMatchObject({
      ok: false,
      value: scholar,
      failure: {
        error_code: 'REF_PATH_INVALID',
        fallback_strategy: 'return_full_data',
        fallback_value: null,
      },
    });
  });
});

describe('protocol 002 §2.2, as the protocol writes it', () => {
  it('$.atoms[*].content filtered by atom_type eq methodology is the methodology atoms’ content', async () => {
    const example = JSON.parse(`{
      "data_reference": {
        "ref_type": "task_output",
        "task_id": "task_scholar_001",
        "path": "$.atoms[*].content",
        "filter": {
          "field": "atom_type",
          "operator": "eq",
          "value": "methodology"
        },
        "transform": "none"
      }
    }`);
    const output = {
      atoms: [
        ...scholar.atoms,
        { atom_id: 'a5', atom_type: 'methodology', content: 'Label smoothing 0.1.', confidence: 0.8 },
      ],
    };
    const { resolver } = setup({ task_scholar_001: { status: 'succeeded', output } });
    const r = await resolver.resolveReference(example.data_reference);
    expect(r).toEqual({ ok: true, value: ['Self-attention.', 'Label smoothing 0.1.'], attempts: 1 });
  });

  it('a filter after a wildcard looks at the nearest item on the path that has the field', async () => {
    const output = {
      papers: [
        {
          year: 2017,
          atoms: [
            { content: 'x', atom_type: 'claim' },
            { content: 'y', atom_type: 'methodology' },
          ],
        },
        { year: 2020, atoms: [{ content: 'z', atom_type: 'claim' }] },
      ],
    };
    const { resolver } = setup({ t: { status: 'succeeded', output } });
    const get = (path: string, filter: Record<string, unknown>) =>
      resolver.resolveReference({ ref_type: 'task_output', task_id: 't', path, filter });
    expect(
      await get('$.papers[*].atoms[*].content', { field: 'year', operator: 'gte', value: 2018 }),
    ).toMatchObject({
      ok: true,
      value: ['z'],
    });
    expect(
      await get('$.papers[*].atoms[*].content', { field: 'atom_type', operator: 'eq', value: 'claim' }),
    ).toMatchObject({ ok: true, value: ['x', 'z'] });
    // A field nothing on the way has is still a filter error (ignored, as §3.2 says).
    expect(
      await get('$.papers[*].atoms[*].content', { field: 'atom_kind', operator: 'eq', value: 'claim' }),
    ).toMatchObject({ ok: false, value: ['x', 'y', 'z'], failure: { error_code: 'REF_FILTER_ERROR' } });
  });
});

describe('task_output filters', () => {
  const filter = async (f: Record<string, unknown>, path = '$.atoms') =>
    setup().resolver.resolveReference(ref({ path, filter: f }));

  it.each([
    [{ field: 'atom_type', operator: 'eq', value: 'claim' }, ['a1', 'a3']],
    [{ field: 'atom_type', operator: 'ne', value: 'claim' }, ['a2', 'a4']],
    [{ field: 'atom_type', operator: 'in', value: ['evidence', 'methodology'] }, ['a2', 'a4']],
    [{ field: 'confidence', operator: 'gt', value: 0.85 }, ['a1']],
    [{ field: 'confidence', operator: 'gte', value: 0.85 }, ['a1', 'a3']],
    [{ field: 'confidence', operator: 'lt', value: 0.7 }, ['a4']],
    [{ field: 'confidence', operator: 'lte', value: 0.7 }, ['a2', 'a4']],
    // case-sensitive: a3's "Attention" does not contain "attention"
    [{ field: 'content', operator: 'contains', value: 'attention' }, ['a2']],
    [{ field: 'tags', operator: 'contains', value: 'core' }, ['a1']],
    [{ field: 'atom_type', operator: 'in', value: [] }, []],
  ])('applies %j', async (f, expected) => {
    const r = await filter(f);
    expect(r.ok).toBe(true);
    expect(ids(r)).toEqual(expected);
  });

  it('keeps a single selected object that matches and drops (null) one that does not', async () => {
    const keep = await filter({ field: 'quality_score', operator: 'gte', value: 0.5 }, '$.metadata');
    expect(keep).toMatchObject({ ok: true, value: scholar.metadata });
    const drop = await filter({ field: 'quality_score', operator: 'gt', value: 0.95 }, '$.metadata');
    expect(drop).toMatchObject({ ok: true, value: null });
  });

  it('reads a dotted field when no key has that name', async () => {
    const r = await filter({ field: 'source.section', operator: 'eq', value: '3.1' }, '$.metadata');
    expect(r).toMatchObject({ ok: true, value: scholar.metadata });
  });

  it('ignores a filter on a field no element has, recording REF_FILTER_ERROR', async () => {
    const r = await filter({ field: 'atom_kind', operator: 'eq', value: 'claim' });
    expect(r.ok).toBe(false);
    expect(ids(r)).toEqual(['a1', 'a2', 'a3', 'a4']);
    if (!r.ok)
      expect(r.failure).toMatchObject({
        ref_type: 'task_output',
        task_id: 'scholar',
        error_code: 'REF_FILTER_ERROR',
        fallback_strategy: 'ignore_filter',
      });
    if (!r.ok) expect(r.failure.error_message).toContain('atom_kind');
  });

  it.each([
    [{ field: 'confidence', operator: 'gt', value: 'high' }, 'cannot be compared'],
    [{ field: 'atom_type', operator: 'in', value: 'claim' }, 'filter.value'],
    [{ field: 'content', operator: 'contains', value: 3 }, 'filter.value'],
    [{ field: 'content', operator: 'like', value: 'x' }, 'filter.operator'],
    [{ field: 'content', value: 'x' }, 'filter.operator'],
  ])('ignores the wrong-typed filter %j with REF_FILTER_ERROR', async (f, mention) => {
    const r = await filter(f);
    expect(r).toMatchObject({ ok: false, failure: { error_code: 'REF_FILTER_ERROR' } });
    expect(ids(r)).toHaveLength(4);
    if (!r.ok) expect(r.failure.error_message).toContain(mention);
  });
});

describe('task_output transforms', () => {
  it('keys_only lists the keys of an object or of each element', async () => {
    const { resolver } = setup();
    expect(
      await resolver.resolveReference(ref({ path: '$.metadata', transform: 'keys_only' })),
    ).toMatchObject({
      value: ['quality_score', 'source'],
    });
    const r = await resolver.resolveReference(ref({ path: '$.atoms[0:2]', transform: 'keys_only' }));
    expect(r).toMatchObject({
      ok: true,
      value: [Object.keys(scholar.atoms[0]!), Object.keys(scholar.atoms[1]!)],
    });
  });

  it('keys_only of a number is a REF_FORMAT_ERROR, which aborts by default', async () => {
    const p = setup().resolver.resolveReference(
      ref({ path: '$.metadata.quality_score', transform: 'keys_only' }),
    );
    await expect(p).rejects.toMatchObject({ code: 'REF_FORMAT_ERROR' });
  });

  it('summary without a summarizer gives a structural summary', async () => {
    const r = await setup().resolver.resolveReference(ref({ path: '$.atoms', transform: 'summary' }));
    expect(r.ok).toBe(true);
    const s = r.ok ? (r.value as Record<string, unknown>) : {};
    expect(s.summary_of).toBe('array');
    expect(s.total_items).toBe(4);
    expect(s.item_types).toEqual({ object: 4 });
    expect(s.item_keys).toEqual(['atom_id', 'atom_type', 'content', 'confidence', 'tags']);
    expect(s.first_items).toHaveLength(3);
  });

  it('summary uses the injected summarizer, awaited', async () => {
    const resolver = createResolver({
      clock: new ManualClock(),
      getTaskOutput: async () => ({ status: 'partial', output: scholar }),
      summarize: async (v) => `${(v as unknown[]).length} claims`,
    });
    const r = await resolver.resolveReference(
      ref({ path: "$.atoms[?(@.atom_type=='claim')]", transform: 'summary' }),
    );
    expect(r).toEqual({ ok: true, value: '2 claims', attempts: 1 });
  });
});

describe('task_output targets', () => {
  it('an unknown task id is REF_NOT_FOUND, used as the default value null', async () => {
    const r = await setup().resolver.resolveReference({ ref_type: 'task_output', task_id: 'nope' });
    expect(r).toMatchObject({
      ok: false,
      value: null,
      failure: { error_code: 'REF_NOT_FOUND', task_id: 'nope', attempts: 1 },
    });
    if (!r.ok) expect(r.failure.error_message).toContain('no task with id "nope"');
  });

  it('a task that has not finished is REF_NOT_FOUND naming its status', async () => {
    const { resolver } = setup({ t: { status: 'pending' } });
    const r = await resolver.resolveReference({ ref_type: 'task_output', task_id: 't' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure.error_message).toContain('status pending');
  });

  it('a getTaskOutput that throws is REF_NOT_FOUND, not a crash', async () => {
    const resolver = createResolver({
      clock: new ManualClock(),
      getTaskOutput: async () => {
        throw new Error('store closed');
      },
    });
    const r = await resolver.resolveReference({ ref_type: 'task_output', task_id: 't' });
    expect(r).toMatchObject({ ok: false, failure: { error_code: 'REF_NOT_FOUND' } });
  });
});

describe('task_output scope (least privilege)', () => {
  const scopedSetup = () =>
    setup({
      scholar: { status: 'succeeded', output: scholar, scope: 'flow-a' },
      pending: { status: 'pending', scope: 'flow-a' },
    });

  it('reads a record of its own scope', async () => {
    const { resolver } = scopedSetup();
    const r = await resolver.resolveReference(ref({ path: '$.metadata.quality_score' }), { scope: 'flow-a' });
    expect(r).toMatchObject({ ok: true, value: 0.9 });
  });

  it.each([
    ['another scope', { scope: 'flow-b' }, 'scholar'],
    ['no scope at all', {}, 'scholar'],
    ['another scope, whatever the run state', { scope: 'flow-b' }, 'pending'],
  ])('refuses a record of %s with REF_PERMISSION_DENIED naming the reference', async (_, opts, id) => {
    const { resolver } = scopedSetup();
    const err = await resolver
      .resolveReference({ ref_type: 'task_output', task_id: id }, opts)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'REF_PERMISSION_DENIED' });
    expect((err as Error).message).toContain(`task_output reference to "${id}" refused`);
    expect((err as Error).message).toContain('another flow');
  });

  it('reads across scopes when permitted runs "any"', async () => {
    const { resolver } = scopedSetup();
    const r = await resolver.resolveReference(ref({ path: '$.metadata.quality_score' }), {
      scope: 'flow-b',
      permissions: { runs: 'any' },
    });
    expect(r).toMatchObject({ ok: true, value: 0.9 });
  });
});
