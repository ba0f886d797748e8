import { beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../core/index.ts';
import { checkContextReport } from './context-report.ts';
import type { ContextInput } from './context-request.ts';
import { type ContextPlanner, createContextPlanner } from './create-context-planner.ts';
import type { ContextPlan } from './plan-context.ts';

// Deterministic mixed English/Chinese prose, so the summarizer has real sentences to choose from.
function prose(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const en =
    'attention model layer training data result method evidence network sequence parallel encoder decoder benchmark translation accuracy baseline gradient dataset context'.split(
      ' ',
    );
  const zh =
    '注意力 模型 训练 数据 结果 方法 证据 网络 序列 并行 计算 编码器 解码器 基准 翻译 准确率 实验 参数 梯度 上下文'.split(
      ' ',
    );
  const pick = (list: string[]) => list[Math.floor(next() * list.length)]!;
  return () => {
    const n = 6 + Math.floor(next() * 10);
    if (next() < 0.4) return `${Array.from({ length: n }, () => pick(zh)).join('')}。`;
    const s = Array.from({ length: n }, () => pick(en)).join(' ');
    return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
  };
}

/** Pads `build` with single-token words until the value counts exactly `target` tokens. */
function exactly<T>(count: (v: T) => number, target: number, build: (pad: string) => T): T {
  let k = 0;
  for (let i = 0; i < 40; i++) {
    const v = build(' a'.repeat(k));
    const c = count(v);
    if (c === target) return v;
    k = Math.max(0, k + target - c);
  }
  throw new Error(`cannot reach ${target} tokens`);
}

const TYPES = ['claim', 'evidence', 'methodology', 'background', 'citation'];
function atomsOf(planner: ContextPlanner, target: number, prefix: string, seed: number) {
  const sentence = prose(seed);
  const count = (v: unknown) => planner.countTokens(v);
  const atoms: Array<Record<string, unknown>> = [];
  // Counts are cached by identity, so count a fresh copy of the growing array.
  while (count([...atoms]) < target - 400)
    atoms.push({
      atom_id: `${prefix}_${atoms.length}`,
      atom_type: TYPES[atoms.length % TYPES.length],
      content: Array.from({ length: 8 }, sentence).join(' '),
      confidence: 0.5 + (atoms.length % 5) / 10,
    });
  const last = atoms.pop()!;
  return exactly(count, target, (pad) => [...atoms, { ...last, content: `${last.content}${pad}` }]);
}
function textOf(planner: ContextPlanner, target: number, seed: number) {
  const sentence = prose(seed);
  // Grow by estimate (sum of sentence counts), so building a large text stays linear.
  let text = '';
  let estimate = 0;
  while (estimate < target - 100) {
    const s = `${sentence()} `;
    estimate += planner.countTokens(s);
    text += s;
  }
  while (planner.countTokens(text) > target) text = text.slice(0, Math.floor(text.length * 0.95));
  return exactly(
    (v: string) => planner.countTokens(v),
    target,
    (pad) => text.trimEnd() + pad,
  );
}

let planner: ContextPlanner;
let example: ContextInput[];
beforeAll(async () => {
  planner = await createContextPlanner();
  const scholar = atomsOf(planner, 45_000, 'sch', 1);
  const validation = atomsOf(planner, 8_000, 'val', 2);
  example = [
    {
      name: 'scholar_output',
      value: scholar,
      priority: 1,
      refInfo: { ref_type: 'task_output', task_id: 'task_scholar_001', path: '$.atoms' },
    },
    {
      name: 'validator_output',
      value: validation,
      priority: 1,
      refInfo: { ref_type: 'task_output', task_id: 'task_validator_001', path: '$.validation_results' },
    },
    {
      name: 'db_query_result',
      value: atomsOf(planner, 35_000, 'db', 3),
      priority: 2,
      refInfo: { ref_type: 'db_query', table: 'knowledge_atoms', limit: 100 },
    },
    { name: 'system_prompt', value: textOf(planner, 5_000, 4), dataType: 'system_prompt' },
    { name: 'task_instructions', value: textOf(planner, 2_000, 5), dataType: 'instruction' },
  ];
});

/** The report's arithmetic, recomputed here independently of checkContextReport. */
function expectConsistent(plan: ContextPlan) {
  const cm = plan.report.context_management;
  expect(checkContextReport(plan.report)).toEqual([]);
  const total = Object.values(cm.total_input_data).reduce((s, v) => s + v.tokens, 0);
  const reductions = cm.resolution.actions.reduce((s, a) => s + a.original_tokens - a.reduced_tokens, 0);
  expect(cm.total_tokens).toBe(total);
  expect(cm.overflow).toBe(Math.max(0, total - cm.context_limit));
  expect(cm.resolution.final_tokens).toBe(total - reductions);
  expect(plan.inputs.reduce((s, i) => s + i.tokens, 0)).toBe(cm.resolution.final_tokens);
  expect(cm.resolution.within_limit).toBe(cm.resolution.final_tokens <= cm.context_limit);
}

describe('planning the §7.2 example (95,000 tokens into 82,800)', () => {
  it('builds inputs of exactly the protocol’s sizes', () => {
    expect(example.map((i) => planner.countTokens(i.value))).toEqual([45_000, 8_000, 35_000, 5_000, 2_000]);
  });

  it('trims by priority when every input is sent in full, and ends within the limit', async () => {
    const plan = await planner.planContext({
      taskId: 'task_vault_001',
      agent: 'Knowledge_Vault',
      inputs: example,
      transferConfig: { mode: 'full' },
    });
    const cm = plan.report.context_management;
    expect(Object.keys(plan.report)).toEqual(['context_management']);
    expect(Object.keys(cm)).toEqual([
      'task_id',
      'total_input_data',
      'total_tokens',
      'context_limit',
      'overflow',
      'resolution',
    ]);
    expect(cm).toMatchObject({
      task_id: 'task_vault_001',
      total_input_data: {
        scholar_output: { tokens: 45_000, priority: 1 },
        validator_output: { tokens: 8_000, priority: 1 },
        db_query_result: { tokens: 35_000, priority: 2 },
        system_prompt: { tokens: 5_000, priority: 1 },
        task_instructions: { tokens: 2_000, priority: 1 },
      },
      total_tokens: 95_000,
      context_limit: 82_800,
      overflow: 12_200,
    });
    expect(Object.keys(cm.resolution)).toEqual(['strategy', 'actions', 'final_tokens', 'within_limit']);
    expect(cm.resolution.strategy).toBe('priority_based_trimming');
    expect(cm.resolution.actions).toHaveLength(1);
    const [action] = cm.resolution.actions;
    expect(action).toMatchObject({ data: 'db_query_result', action: 'summarize', original_tokens: 35_000 });
    // Level 1 holds 60,000; the summary must stay under 0.8 × 82,800 = 66,240.
    expect(action!.reduced_tokens).toBeLessThanOrEqual(66_240 - 60_000);
    expect(cm.resolution.within_limit).toBe(true);
    expectConsistent(plan);
    const db = plan.inputs.find((i) => i.name === 'db_query_result')!;
    expect(db.transfer?.transfer_mode).toBe('summary');
    expect(db.tokens).toBe(planner.countTokens((db.transfer as { data: unknown }).data));
  });

  it('with the tables’ defaults, sends Knowledge_Vault references and the instructions in full', async () => {
    const plan = await planner.planContext({
      taskId: 'task_vault_001',
      agent: 'Knowledge_Vault',
      inputs: example,
    });
    const cm = plan.report.context_management;
    expect(cm.resolution.strategy).toBe('transfer_planning');
    expect(cm.resolution.actions.map((a) => [a.data, a.action])).toEqual([
      ['scholar_output', 'reference'],
      ['validator_output', 'reference'],
      ['db_query_result', 'reference'],
    ]);
    expect(plan.inputs.map((i) => i.transfer?.transfer_mode)).toEqual([
      'reference',
      'reference',
      'reference',
      'full',
      'full',
    ]);
    expect(cm.resolution.within_limit).toBe(true);
    expectConsistent(plan);
  });
});

describe('planning a step’s inputs', () => {
  let small: ContextPlanner;
  beforeAll(async () => {
    small = await createContextPlanner({ agentLimits: { Tiny: { data_region_tokens: 3_000 } } });
  });

  it('compresses a critical input by dropping its own low-priority elements first, then summarizing', async () => {
    const atoms = atomsOf(small, 4_000, 'a', 9);
    const plan = await small.planContext({
      taskId: 't1',
      agent: 'Tiny',
      inputs: [
        { name: 'atoms', value: atoms, priority: 1 },
        { name: 'instructions', value: textOf(small, 300, 10), dataType: 'instruction' },
      ],
      transferConfig: { mode: 'full' },
    });
    const actions = plan.report.context_management.resolution.actions;
    expect(actions[0]).toMatchObject({
      data: 'atoms',
      action: 'filter_by_priority',
      filter: 'priority <= 3',
      original_tokens: 4_000,
    });
    expect(actions.map((a) => a.action)).toEqual(expect.arrayContaining(['filter_by_priority']));
    expect(plan.report.context_management.resolution.within_limit).toBe(true);
    expectConsistent(plan);
    const kept = plan.inputs[0]!.transfer;
    expect(kept).not.toBeNull();
    expect(JSON.stringify(kept)).not.toContain('"citation"');
  });

  it('skips supplementary and optional inputs that do not fit, reporting each as omitted', async () => {
    const plan = await small.planContext({
      taskId: 't2',
      agent: 'Tiny',
      inputs: [
        { name: 'claims', value: textOf(small, 2_500, 11), priority: 1 },
        { name: 'background', value: textOf(small, 300, 12), dataType: 'background' },
        { name: 'citations', value: textOf(small, 400, 13), dataType: 'citation' },
        { name: 'meta', value: { paper: 'p1' }, dataType: 'metadata' },
      ],
      transferConfig: { mode: 'full' },
    });
    const omitted = plan.report.context_management.resolution.actions
      .filter((a) => a.action === 'omit')
      .map((a) => a.data);
    expect(omitted).toEqual(['background', 'citations']);
    expect(plan.inputs.find((i) => i.name === 'meta')!.transfer).toEqual({
      transfer_mode: 'full',
      data: { paper: 'p1' },
    });
    expect(plan.inputs.find((i) => i.name === 'background')!.transfer).toBeNull();
    expectConsistent(plan);
  });

  it('drops inputs and elements outside transfer_config.priority_filter', async () => {
    const atoms = atomsOf(small, 1_500, 'f', 14);
    const plan = await small.planContext({
      taskId: 't3',
      agent: 'Scholar',
      inputs: [
        { name: 'atoms', value: atoms, priority: 1 },
        { name: 'background', value: 'Some background.', dataType: 'background' },
      ],
      transferConfig: { priority_filter: [1, 2] },
    });
    const actions = plan.report.context_management.resolution.actions;
    expect(actions.map((a) => [a.data, a.action, a.filter])).toEqual([
      ['atoms', 'filter_by_priority', 'priority <= 2'],
      ['background', 'filter_by_priority', 'priority <= 2'],
    ]);
    const types = new Set(
      ((plan.inputs[0]!.transfer as { data: Array<{ atom_type: string }> }).data ?? []).map(
        (a) => a.atom_type,
      ),
    );
    expect([...types].sort()).toEqual(['claim', 'evidence', 'methodology']);
    expectConsistent(plan);
  });

  it('reports, or with onOverflow "throw" raises CONTEXT_OVERFLOW, when instructions alone exceed the limit', async () => {
    const inputs: ContextInput[] = [
      { name: 'instructions', value: textOf(small, 3_500, 15), dataType: 'instruction' },
    ];
    const plan = await small.planContext({ taskId: 't4', agent: 'Tiny', inputs });
    expect(plan.report.context_management.resolution).toMatchObject({
      final_tokens: 3_500,
      within_limit: false,
    });
    expectConsistent(plan);
    const strict = await createContextPlanner({
      agentLimits: { Tiny: { data_region_tokens: 3_000 } },
      onOverflow: 'throw',
    });
    const err = await strict.planContext({ taskId: 't4', agent: 'Tiny', inputs }).catch((e: unknown) => e);
    expect(isBatonError(err, 'CONTEXT_OVERFLOW')).toBe(true);
  });

  it('batches an input over 50K tokens and reports its largest batch', async () => {
    const big = textOf(planner, 60_000, 16);
    const plan = await planner.planContext({
      taskId: 't5',
      agent: 'Scholar',
      inputs: [{ name: 'paper', value: big, dataType: 'raw_text' }],
    });
    const [action] = plan.report.context_management.resolution.actions;
    expect(action).toMatchObject({ data: 'paper', action: 'batch', original_tokens: 60_000 });
    expect(action!.reduced_tokens).toBeLessThanOrEqual(30_000);
    const transfer = plan.inputs[0]!.transfer as {
      transfer_mode: string;
      batches: unknown[];
      total_batches: number;
    };
    expect(transfer.transfer_mode).toBe('batched_reference');
    expect(transfer.batches.length).toBe(transfer.total_batches);
    expectConsistent(plan);
  });

  it.each([
    [{ taskId: '', agent: 'A', inputs: [] }, 'taskId'],
    [
      {
        taskId: 't',
        agent: 'A',
        inputs: [
          { name: 'x', value: 1 },
          { name: 'x', value: 2 },
        ],
      },
      'inputs[1].name',
    ],
    [{ taskId: 't', agent: 'A', inputs: [{ name: 'x', value: 1, priority: 5 }] }, 'inputs[0].priority'],
    [{ taskId: 't', agent: 'A', inputs: [], transferConfig: { mode: 'zip' } }, 'transferConfig.mode'],
    [
      { taskId: 't', agent: 'A', inputs: [{ name: 'x', value: 1, refInfo: { task_id: 'a' } }] },
      'inputs[0].refInfo',
    ],
    [
      { taskId: 't', agent: 'A', inputs: [], transferConfig: { priority_filter: [0] } },
      'transferConfig.priority_filter',
    ],
  ])('rejects request %j naming %s', async (request, field) => {
    const err = await planner.planContext(request as never).catch((e: unknown) => e);
    expect(isBatonError(err, 'INVALID_INPUT')).toBe(true);
    expect((err as { field: string }).field).toBe(field);
  });
});
