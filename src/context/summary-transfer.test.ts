import { beforeAll, describe, expect, it } from 'vitest';
import type { SummaryTransfer } from './build-transfers.ts';
import { type ContextPlanner, createContextPlanner } from './create-context-planner.ts';

let planner: ContextPlanner;
beforeAll(async () => {
  planner = await createContextPlanner();
});

const CLAIM =
  'Transformer架构通过自注意力机制实现了并行计算，摒弃了循环结构。自注意力让每个位置直接关注序列中的所有位置。这种设计显著缩短了训练时间，并在翻译任务上取得了最好的结果。';
const BACKGROUND =
  'Recurrent networks were the standard for sequence modelling for many years. They process tokens one at a time, which limits parallelism. Convolutional models were also explored as an alternative.';

function atom(i: number, atom_type: string, content: string) {
  return {
    atom_id: `atom_${String(i).padStart(3, '0')}`,
    atom_type,
    content,
    confidence: 0.95,
    evidence: ['evidence_001', 'evidence_002'],
    metadata: { source_section: '3.1', extraction_method: 'llm_extraction' },
  };
}
const atoms = Array.from({ length: 15 }, (_, i) =>
  atom(i, i % 3 === 2 ? 'background' : 'claim', i % 3 === 2 ? BACKGROUND : CLAIM),
);
const scholarOutput = { atoms, relations: [], metadata: {} };

async function summary(value: unknown, summary_config: Record<string, unknown>, agent = 'Validator') {
  const plan = await planner.planTransfer(value, {
    agent,
    transferConfig: { mode: 'summary', summary_config },
  });
  expect(plan.transfer.transfer_mode).toBe('summary');
  return plan as typeof plan & { transfer: SummaryTransfer };
}

describe('summary transfer (§4.2)', () => {
  it('produces the protocol shape: preserved fields, <field>_summary, totals and omitted fields', async () => {
    const plan = await summary(scholarOutput, {
      preserve_fields: ['atom_id', 'atom_type', 'confidence'],
      summarize_fields: ['content'],
      summary_ratio: 0.3,
    });
    const { data, summary_config } = plan.transfer;
    expect(summary_config).toMatchObject({
      strategy: 'extractive',
      preserve_fields: ['atom_id', 'atom_type', 'confidence'],
      summarize_fields: ['content'],
      summary_ratio: 0.3,
    });
    expect(data).toMatchObject({
      total_atoms: 15,
      summarized_atoms: 15,
      total_relations: 0,
      relations_summary: [],
    });
    expect(data.omitted_fields).toEqual(expect.arrayContaining(['evidence', 'metadata']));
    const first = (data.atoms_summary as Array<Record<string, unknown>>)[0]!;
    expect(Object.keys(first)).toEqual(['atom_id', 'atom_type', 'content_summary', 'confidence']);
    expect(CLAIM).toContain(first.content_summary as string);
    expect(planner.countTokens(first.content_summary)).toBeLessThan(planner.countTokens(CLAIM));
    expect(plan.tokens).toBe(planner.countTokens(data));
  });

  it('infers the fields to keep and to summarize when none are given', async () => {
    const plan = await summary(scholarOutput, {});
    expect(plan.transfer.summary_config.preserve_fields).toEqual(['atom_id', 'atom_type', 'confidence']);
    expect(plan.transfer.summary_config.summarize_fields).toEqual(['content']);
  });

  it('keeps within max_length (tokens) and drops the least important records first', async () => {
    const plan = await summary(scholarOutput, { max_length: 250 });
    const data = plan.transfer.data;
    expect(plan.tokens).toBeLessThanOrEqual(250);
    expect(plan.transfer.summary_config.max_length).toBe(250);
    expect(data.summarized_atoms).toBeLessThan(15);
    const kept = data.atoms_summary as Array<{ atom_type: string }>;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((a) => a.atom_type === 'claim')).toBe(true);
  });

  it('summarizes a bare string as text_summary and a top-level array as items', async () => {
    const text = Array.from({ length: 12 }, () => BACKGROUND).join('\n\n');
    const s = await summary(text, {});
    expect(s.transfer.data).toMatchObject({ total_sentences: 36 });
    expect(s.tokens).toBeLessThan(planner.countTokens(text) * 0.5);
    const arr = await summary(atoms, {});
    expect(arr.transfer.data).toMatchObject({ total_items: 15, summarized_items: 15 });
  });

  it('keeps a table’s header and statistics (§5.3)', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({
      model: i % 2 ? 'transformer' : 'rnn',
      bleu: 20 + (i % 10),
      layers: 6,
    }));
    const plan = await planner.planTransfer(rows, {
      agent: 'Validator',
      dataType: 'table',
      transferConfig: { max_tokens: 400 },
    });
    expect(plan.decision).toMatchObject({ mode: 'summary' });
    const data = (plan.transfer as SummaryTransfer).data as {
      table_summary: {
        header: string[];
        column_stats: Record<string, Record<string, unknown>>;
        sample_rows: unknown[];
      };
      total_rows: number;
      summarized_rows: number;
    };
    expect(data.table_summary.header).toEqual(['model', 'bleu', 'layers']);
    expect(data.table_summary.column_stats.bleu).toMatchObject({
      type: 'number',
      min: 20,
      max: 29,
      mean: 24.5,
      count: 200,
    });
    expect(data.table_summary.column_stats.model).toMatchObject({ type: 'string', distinct: 2 });
    expect(data.total_rows).toBe(200);
    expect(data.summarized_rows).toBe(data.table_summary.sample_rows.length);
    expect(plan.tokens).toBeLessThanOrEqual(400);
  });

  it('reports an abstractive request without a summarizer as an extractive fallback', async () => {
    const plan = await summary(scholarOutput, { strategy: 'abstractive' });
    expect(plan.transfer.summary_config).toMatchObject({
      strategy: 'extractive',
      strategy_fallback: { requested: 'abstractive', reason: 'no summarizer configured' },
    });
    expect(plan.notes[0]).toMatch(/abstractive fell back to extractive/);
  });

  it('sends each long field to a configured summarizer, at most `summaryConcurrency` at a time', async () => {
    let running = 0;
    let peak = 0;
    const budgets: Array<[string, number]> = [];
    const llm = await createContextPlanner({
      summaryConcurrency: 2,
      summarizer: async (text, { maxTokens }) => {
        running++;
        peak = Math.max(peak, running);
        await Promise.resolve();
        running--;
        budgets.push([text, maxTokens]);
        return text.slice(0, 6);
      },
    });
    const plan = await llm.planTransfer(scholarOutput, {
      agent: 'Validator',
      transferConfig: { mode: 'summary' },
    });
    const s = plan.transfer as SummaryTransfer;
    expect(s.summary_config.strategy).toBe('abstractive');
    expect(s.summary_config.summary_ratio).toBe(0.2);
    expect((s.data.atoms_summary as Array<{ content_summary: string }>)[0]!.content_summary).toBe(
      CLAIM.slice(0, 6),
    );
    expect(budgets).toHaveLength(15);
    for (const [text, maxTokens] of budgets)
      expect(maxTokens).toBe(Math.max(12, Math.ceil(llm.countTokens(text) * 0.2)));
    expect(peak).toBe(2);
  });
});
