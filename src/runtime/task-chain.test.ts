/**
 * Protocol 002 §7.1's task chain, run as the protocol writes it (issue 12 item 4): the JSON is a
 * plan; the Scholar reads the PDF from the workspace, the Validator receives a text summary of the
 * Scholar's claims (not counts and keys), the Knowledge Vault receives references to both outputs
 * and the declared table's rows, each step after the steps it references.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { makePdf } from '../refs/fixtures/make-pdf.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createBaton } from './baton.ts';
import { loadPlan } from './define-flow.ts';
import { defineTask } from './define-task.ts';

const TASK_CHAIN = `{
  "task_chain": [
    {
      "task_id": "task_scholar_001",
      "agent": "Scholar",
      "input": {
        "data_references": [
          {
            "ref_type": "file",
            "path": "/workspace/papers/transformer.pdf",
            "format": "pdf"
          }
        ]
      },
      "output_schema": "knowledge_atoms"
    },
    {
      "task_id": "task_validator_001",
      "agent": "Validator",
      "input": {
        "data_references": [
          {
            "ref_type": "task_output",
            "task_id": "task_scholar_001",
            "path": "$.atoms[?(@.atom_type=='claim')]",
            "transform": "summary"
          }
        ],
        "transfer_config": {
          "mode": "summary",
          "max_tokens": 5000,
          "priority_filter": [1, 2]
        }
      }
    },
    {
      "task_id": "task_vault_001",
      "agent": "Knowledge_Vault",
      "input": {
        "data_references": [
          {
            "ref_type": "task_output",
            "task_id": "task_scholar_001",
            "path": "$.atoms"
          },
          {
            "ref_type": "task_output",
            "task_id": "task_validator_001",
            "path": "$.validation_results"
          },
          {
            "ref_type": "db_query",
            "table": "knowledge_atoms",
            "conditions": [
              {"field": "domain", "operator": "eq", "value": "deep_learning"}
            ],
            "limit": 100
          }
        ],
        "transfer_config": {
          "mode": "reference",
          "inline_preview_count": 5
        }
      }
    }
  ]
}`;

const CLAIMS = [
  'The Transformer relies entirely on self-attention to compute representations of its input and output. It dispenses with recurrence and convolutions entirely. Experiments on two machine translation tasks show these models to be superior in quality. They are also more parallelizable and require significantly less time to train.',
  'Self-attention layers connect all positions with a constant number of sequentially executed operations. Recurrent layers require a linear number of sequential operations. Self-attention layers are faster than recurrent layers when the sequence length is smaller than the representation dimensionality.',
];

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

describe('protocol 002 §7.1 task chain', () => {
  it('runs as written: file → Scholar → Validator (claims as text) → Knowledge Vault', async () => {
    rt = testRuntime();
    const workspace = join(rt.dir, 'workspace');
    mkdirSync(join(workspace, 'papers'), { recursive: true });
    writeFileSync(
      join(workspace, 'papers', 'transformer.pdf'),
      makePdf([['Attention Is All You Need', 'We propose the Transformer, based solely on attention.']]),
    );
    rt.store.database.exec(`CREATE TABLE knowledge_atoms (atom_id TEXT, domain TEXT, content TEXT);
      INSERT INTO knowledge_atoms VALUES ('k1', 'deep_learning', 'Residual connections ease optimisation.'),
        ('k2', 'biology', 'Mitochondria make ATP.');`);
    await rt.baton.close();
    const seen: Record<string, string> = {};
    const order: string[] = [];
    const record = (name: string) => (input: unknown) => {
      seen[name] = JSON.stringify(input);
      order.push(name);
    };
    const scholar = defineTask({
      name: 'Scholar',
      context: { agent: 'Scholar' },
      run: async (input: unknown) => {
        record('Scholar')(input);
        return {
          atoms: [
            { atom_id: 'a1', atom_type: 'claim', content: CLAIMS[0], confidence: 0.95 },
            { atom_id: 'a2', atom_type: 'methodology', content: 'Multi-head attention.', confidence: 0.8 },
            { atom_id: 'a3', atom_type: 'claim', content: CLAIMS[1], confidence: 0.85 },
          ],
        };
      },
    });
    const validator = defineTask({
      name: 'Validator',
      context: { agent: 'Validator' },
      run: async (input: unknown) => {
        record('Validator')(input);
        return { validation_results: [{ atom_id: 'a1', valid: true }] };
      },
    });
    const vault = defineTask({
      name: 'Knowledge_Vault',
      context: { agent: 'Knowledge_Vault' },
      run: async (input: unknown) => {
        record('Knowledge_Vault')(input);
        return { stored: true };
      },
    });
    const baton = createBaton({
      store: rt.store,
      clock: rt.clock,
      tasks: [scholar, validator, vault],
      refs: {
        workspaceRoot: workspace,
        tables: { knowledge_atoms: { columns: ['atom_id', 'domain', 'content'] } },
      },
    });
    rt.baton = baton;
    const run = await baton.start(loadPlan(JSON.parse(TASK_CHAIN)));
    const outcome = await run.result();
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe('succeeded');
    expect(order).toEqual(['Scholar', 'Validator', 'Knowledge_Vault']);

    expect(seen.Scholar).toContain('We propose the Transformer, based solely on attention.');
    // The Validator reads the claims: summarized sentences of each claim, no structural summary.
    expect(seen.Validator).toContain('"transfer_mode":"summary"');
    const summary = JSON.parse(seen.Validator ?? '{}') as {
      data_references: Array<{
        data: { items_summary: Array<{ atom_id: string; content_summary: string }> };
      }>;
    };
    const items = summary.data_references[0]?.data.items_summary ?? [];
    expect(items.map((i) => i.atom_id)).toEqual(['a1', 'a3']);
    // Each claim's summary is whole sentences of that claim's text.
    expect(items[0]?.content_summary.length).toBeGreaterThan(40);
    expect(CLAIMS[0]).toContain(items[0]?.content_summary);
    expect(items[1]?.content_summary.length).toBeGreaterThan(40);
    expect(CLAIMS[1]).toContain(items[1]?.content_summary);
    expect(seen.Validator).not.toContain('Multi-head attention');
    expect(seen.Validator).not.toContain('summary_of');
    expect(seen.Validator).not.toContain('item_keys');
    // The Vault gets references with previews, and only the deep-learning row.
    expect(seen.Knowledge_Vault).toContain('"transfer_mode":"reference"');
    expect(seen.Knowledge_Vault).toContain('Residual connections ease optimisation.');
    expect(seen.Knowledge_Vault).not.toContain('Mitochondria');
  });

  it('refuses a task_chain entry with an unknown field or no task_id, naming it', async () => {
    rt = testRuntime();
    const t = defineTask({ name: 'Scholar', run: async () => 1 });
    rt.baton.register(t);
    const err = await rt.baton
      .start(loadPlan({ task_chain: [{ agent: 'Scholar', inputs: {} }] }))
      .catch((e: unknown) => e);
    expect(isBatonError(err, 'PLAN_INVALID')).toBe(true);
    expect((err as Error).message).toContain('task_chain[0].inputs is not a task_chain field');
    expect((err as Error).message).toContain('task_chain[0].task_id must name the entry');
  });
});
