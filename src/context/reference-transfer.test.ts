import { beforeAll, describe, expect, it } from 'vitest';
import { type ContextPlanner, createContextPlanner } from './create-context-planner.ts';
import type { ReferenceTransfer } from './reference-transfer.ts';
import { utf8Length } from './reference-transfer.ts';

let planner: ContextPlanner;
beforeAll(async () => {
  planner = await createContextPlanner();
});

const content = (i: number) =>
  `Transformer架构通过自注意力机制实现了并行计算，这是第${i}条知识原子的详细内容。The model attends to all positions at once and trains in parallel on modern accelerators.`;
const atoms = Array.from({ length: 45 }, (_, i) => ({
  atom_id: `atom_${String(i + 1).padStart(3, '0')}`,
  atom_type: 'claim',
  content: content(i).repeat(6),
  confidence: 0.9,
}));
const output = {
  atoms,
  relations: Array.from({ length: 120 }, (_, i) => ({ from: `atom_${i % 45}`, to: `atom_${(i + 1) % 45}` })),
  metadata: { paper: 'p1' },
};
const ref = { ref_type: 'task_output', task_id: 'task_scholar_001' };

describe('reference transfer (§4.3)', () => {
  it('gives Knowledge_Vault the reference, its paths, stats and a 3-element preview', async () => {
    const plan = await planner.planTransfer(output, { agent: 'Knowledge_Vault', refInfo: ref });
    expect(plan.decision).toMatchObject({ mode: 'reference', by: 'task_type' });
    const t = plan.transfer as ReferenceTransfer;
    expect(t.reference).toEqual({
      ref_type: 'task_output',
      task_id: 'task_scholar_001',
      available_paths: ['$.atoms', '$.relations', '$.metadata'],
      data_stats: {
        total_atoms: 45,
        total_relations: 120,
        estimated_size_bytes: Buffer.byteLength(JSON.stringify(output)),
        estimated_tokens: planner.countTokens(output),
      },
    });
    expect(t.inline_preview.preview_count).toBe(3);
    const preview = t.inline_preview.atoms_preview as Array<Record<string, unknown>>;
    expect(preview).toHaveLength(3);
    expect(preview[0]).toMatchObject({ atom_id: 'atom_001', atom_type: 'claim', confidence: 0.9 });
    expect(preview[0]!.content_preview).toMatch(/^Transformer架构.*\.\.\.$/);
    expect(plan.tokens).toBe(
      planner.countTokens({ reference: t.reference, inline_preview: t.inline_preview }),
    );
    expect(plan.tokens).toBeLessThan(plan.originalTokens / 20);
  });

  it('extends a task_output path into the referenced value', async () => {
    const plan = await planner.planTransfer(atoms, {
      agent: 'Knowledge_Vault',
      refInfo: { ...ref, path: '$.atoms' },
      transferConfig: { mode: 'reference', inline_preview_count: 5 },
    });
    const t = plan.transfer as ReferenceTransfer;
    expect(t.reference.available_paths).toEqual([
      '$.atoms[*]',
      '$.atoms[*].atom_id',
      '$.atoms[*].atom_type',
      '$.atoms[*].content',
      '$.atoms[*].confidence',
    ]);
    expect(t.inline_preview.preview_count).toBe(5);
    expect(t.inline_preview.items_preview).toHaveLength(5);
  });

  it('shrinks the preview to honour max_tokens', async () => {
    const plan = await planner.planTransfer(output, {
      agent: 'Knowledge_Vault',
      refInfo: ref,
      transferConfig: { mode: 'reference', inline_preview_count: 40, max_tokens: 400 },
    });
    expect(plan.tokens).toBeLessThanOrEqual(400);
    expect((plan.transfer as ReferenceTransfer).inline_preview.preview_count).toBeLessThan(40);
  });

  it('measures UTF-8 bytes like Buffer does, surrogate pairs included', () => {
    for (const s of ['abc', '注意力', 'é', '😀 emoji', '']) expect(utf8Length(s)).toBe(Buffer.byteLength(s));
  });
});
