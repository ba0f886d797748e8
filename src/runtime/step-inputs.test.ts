/**
 * Data references in flows (protocol 002) through the engine: edges added for references, the
 * protocol's own filter paths, files under the workspace, Baton's run history as execution_logs,
 * permissions, and transfer planning into a small context budget with its report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineFlow } from './define-flow.ts';
import { defineTask } from './define-task.ts';
import { referencesStayInTheirFlow } from './fixtures/flow-scope.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const atoms = Array.from({ length: 6 }, (_, i) => ({
  atom_id: `atom_${i}`,
  atom_type: i % 2 ? 'claim' : 'evidence',
  confidence: 0.5 + i / 10,
  content: `Finding number ${i}: transformers parallelize attention across the sequence.`,
}));

const scholar = defineTask({
  name: 'scholar',
  run: async () => ({ atoms, metadata: { quality_score: 0.9 } }),
});

describe('data references in flows', () => {
  it("adds the edge for a referenced step and resolves the protocol's filter path", async () => {
    rt = testRuntime();
    let got: unknown;
    const validator = defineTask({
      name: 'validator',
      run: async (input: { claims: unknown }) => {
        got = input.claims;
        return 'ok';
      },
    });
    const flow = defineFlow({
      name: 'chain',
      steps: [
        {
          id: 'validate',
          task: validator,
          input: {
            claims: {
              data_reference: {
                ref_type: 'task_output',
                task_id: 'scholar',
                path: '$.atoms[?(@.confidence>0.8)]',
              },
            },
          },
        },
        { id: 'scholar', task: scholar },
      ],
    });
    const run = await rt.baton.start(flow, {});
    expect((await rt.baton.getRun(`${run.id}.validate`))?.dependsOn).toEqual(['scholar']);
    expect((await run.result()).status).toBe('succeeded');
    expect(got).toMatchObject({
      transfer_mode: 'full',
      data: [{ atom_id: 'atom_4' }, { atom_id: 'atom_5' }],
    });
    const planned = (await rt.store.readEvents({ runId: `${run.id}.validate` })).find(
      (e) => e.type === 'context:planned',
    );
    expect(planned?.data).toMatchObject({
      report: { context_management: { task_id: 'validate', resolution: { within_limit: true } } },
    });
  });

  it('refuses a cycle made by references, and a malformed reference, before storing anything', async () => {
    rt = testRuntime();
    const t = defineTask({ name: 't', run: async () => 1 });
    const ref = (id: string) => ({ data_reference: { ref_type: 'task_output', task_id: id } });
    const cyclic = defineFlow({
      name: 'c',
      steps: [
        { id: 'a', task: t, input: { x: ref('b') } },
        { id: 'b', task: t, input: { x: ref('a') } },
      ],
    });
    const err = await rt.baton.start(cyclic, {}).catch((e: unknown) => e);
    expect(isBatonError(err, 'PLAN_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/cycle: a → b → a/);
    const bad = defineFlow({
      name: 'b',
      steps: [{ id: 'a', task: t, input: { x: { data_reference: { ref_type: 'sql', q: 1 } } } }],
    });
    expect(isBatonError(await rt.baton.start(bad, {}).catch((e: unknown) => e), 'PLAN_INVALID')).toBe(true);
    expect(await rt.baton.listRuns()).toEqual([]);
  });

  it('reads workspace files and the run history, and refuses what a task may not read', async () => {
    rt = testRuntime();
    const root = join(rt.dir, 'workspace');
    mkdirSync(join(root, 'notes'), { recursive: true });
    writeFileSync(join(root, 'notes', 'paper.md'), '# Abstract\nShort abstract.\n# Method\nA long method.\n');
    await rt.baton.close();
    const { createBaton } = await import('./baton.ts');
    const baton = createBaton({
      store: rt.store,
      clock: rt.clock,
      refs: { workspaceRoot: root },
      context: {},
    });
    const seen: unknown[] = [];
    const reader = defineTask({
      name: 'reader',
      permissions: { roots: ['notes'], tables: ['execution_logs'] },
      run: async (input: { abstract: unknown; history: unknown }) => {
        seen.push(input.abstract, input.history);
        return 'read';
      },
    });
    const first = await baton.start(reader, {
      abstract: {
        data_reference: {
          ref_type: 'file',
          path: '/workspace/notes/paper.md',
          format: 'md',
          sections: ['abstract'],
        },
      },
      history: {
        data_reference: {
          ref_type: 'db_query',
          table: 'execution_logs',
          conditions: [{ field: 'event', operator: 'eq', value: 'run:created' }],
          select: ['task', 'event'],
          limit: 5,
        },
      },
    });
    expect((await first.result()).status).toBe('succeeded');
    expect(JSON.stringify(seen[0])).toContain('Short abstract.');
    expect(JSON.stringify(seen[0])).not.toContain('long method');
    expect(seen[1]).toMatchObject({
      transfer_mode: 'full',
      data: [{ task: 'reader', event: 'run:created' }],
    });
    const denied = await baton.start(reader, {
      abstract: { data_reference: { ref_type: 'file', path: '../../etc/passwd', format: 'txt' } },
      history: 'none',
    });
    const out = await denied.result();
    expect(out.status).toBe('failed');
    expect(out.run.error?.code).toBe('REF_PERMISSION_DENIED');
    await baton.close();
  });

  it('summarizes a mid-size input and passes a large one by reference within a small budget', async () => {
    rt = testRuntime();
    await rt.baton.close();
    const { createBaton } = await import('./baton.ts');
    const baton = createBaton({
      store: rt.store,
      clock: rt.clock,
      context: {
        agentLimits: {
          Tiny: {
            max_input_tokens: 40_000,
            max_output_tokens: 2_000,
            reserved_for_system_prompt: 1_000,
            reserved_for_instructions: 1_000,
            available_for_data: 38_000,
            safety_margin: 0.9,
            effective_data_limit: 34_200,
          },
        },
      },
    });
    const sentence = (i: number) =>
      `Observation ${i} shows that budgets change how agents plan their searches and reports.`;
    const medium = defineTask({
      name: 'medium',
      run: async () => ({ text: Array.from({ length: 250 }, (_, i) => sentence(i)).join(' ') }),
    });
    const large = defineTask({
      name: 'large',
      run: async () => ({
        atoms: Array.from({ length: 1_200 }, (_, i) => ({ atom_id: `a${i}`, content: sentence(i) })),
      }),
    });
    let got: Record<string, { transfer_mode: string }> = {};
    const vault = defineTask({
      name: 'vault',
      // Validators take summaries; the atoms are a relation graph, which is passed by reference.
      context: { agent: 'Tiny', taskType: 'Validator', dataTypes: { atoms: 'relation_graph' } },
      run: async (input: Record<string, { transfer_mode: string }>, ctx) => {
        got = input;
        const first = await ctx.fetch({
          data_reference: { ref_type: 'task_output', task_id: 'large', path: '$.atoms[0]' },
        });
        return first;
      },
    });
    const ref = (id: string) => ({ data_reference: { ref_type: 'task_output', task_id: id } });
    const flow = defineFlow({
      name: 'budget',
      output: 'vault',
      steps: [
        { id: 'medium', task: medium },
        { id: 'large', task: large },
        { id: 'vault', task: vault, input: { notes: ref('medium'), atoms: ref('large') } },
      ],
    });
    const run = await baton.start(flow, {});
    const out = await baton.result(run.id);
    expect(out).toMatchObject({ status: 'succeeded', output: { atom_id: 'a0' } });
    expect(got.notes?.transfer_mode).toBe('summary');
    expect(['reference', 'batched_reference']).toContain(got.atoms?.transfer_mode);
    const planned = (await rt.store.readEvents({ runId: `${run.id}.vault` })).find(
      (e) => e.type === 'context:planned',
    );
    const data = planned?.data as { report: { context_management: Record<string, unknown> } } | undefined;
    const cm = data?.report.context_management ?? {};
    expect(cm.context_limit).toBe(34_200);
    expect(cm.resolution).toMatchObject({ within_limit: true });
    await baton.close();
  });

  it("reads only its own flow's outputs and history unless granted runs: 'any' (issue 11 item 8)", async () => {
    rt = testRuntime();
    await referencesStayInTheirFlow(rt.baton);
  });

  it('refuses an unknown permissions key and a bad runs value when the task is defined', () => {
    const run = async () => 1;
    expect(() => defineTask({ name: 'p', run, permissions: { run: 'any' } as never })).toThrow(
      /permissions\.run is not an option \(did you mean "runs"\?\)/,
    );
    expect(() => defineTask({ name: 'p', run, permissions: { runs: 'all' as never } })).toThrow(
      /permissions\.runs/,
    );
  });
});
