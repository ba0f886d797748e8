/**
 * Protocol 003 through the engine: an agent task under a 60 s invocation limit parks in
 * `waiting: resume` with its conversation checkpointed at 55 s, and a resume continues from the
 * right turn (8 + 10 = 18), on the manual clock with the scripted model.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentTool,
  agentTool,
  createScriptedModel,
  type ScriptContext,
  type ScriptedTurn,
} from '../agent/index.ts';
import { isBatonError } from '../core/index.ts';
import { type RunRecord, sqliteDriver } from '../store/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { defineAgentTask } from './define-agent-task.ts';

let rt: TestRuntime;
afterEach(async () => {
  await rt?.dispose();
});

const search = agentTool({
  inputSchema: z.object({ q: z.string() }),
  execute: async ({ q }) => ({ hits: [q] }),
}) as AgentTool;

/** Turns 1–8 take 7 s each (the first invocation parks after 8), later turns 5 s, turn 18 answers. */
function script(ctx: ScriptContext): ScriptedTurn {
  if (ctx.turn >= 18) return { text: 'Battery health is good.', delayMs: 1_000 };
  return {
    toolCalls: [{ toolName: 'search', input: { q: `turn ${ctx.turn}` } }],
    delayMs: ctx.turn <= 8 ? 7_000 : 5_000,
  };
}

async function settle(id: string): Promise<RunRecord> {
  let done: RunRecord | undefined;
  const settled = rt.baton.settled(id).then((r) => {
    done = r;
  });
  for (let i = 0; !done; i++) {
    if (i > 5_000) throw new Error('did not settle');
    await rt.clock.advance(500);
  }
  await settled;
  return done;
}

function analyst() {
  return defineAgentTask({
    name: 'insights',
    input: z.object({ systemId: z.string() }),
    model: () => createScriptedModel(script, { clock: rt.clock }),
    system: 'You are a battery analyst.',
    prompt: (i) => `Provide comprehensive battery analysis for ${i.systemId}`,
    tools: { search },
  });
}

describe('agent tasks (protocol 003)', () => {
  it('parks at its limit with a checkpoint and continues from the right turn on resume', async () => {
    rt = testRuntime();
    const run = await rt.baton.start(analyst(), { systemId: 'sys_123' });
    const parked = await settle(run.id);
    expect(parked).toMatchObject({ status: 'waiting', waitReason: 'resume' });
    expect(parked.meta.invocation).toMatchObject({
      turns: 8,
      toolCalls: 8,
      timeoutMs: 60_000,
      canResume: true,
      wasResumed: false,
    });
    const cp = await rt.store.getLastCheckpoint(run.id);
    expect(cp?.state).toMatchObject({ turnCount: 8, toolCallCount: 8, version: '1.0' });
    // Saved before the 60 s limit (the pre-timeout checkpoint), not after it.
    expect(cp?.createdAt).toBeLessThan((parked.startedAt ?? 0) + 60_000);

    const resumed = await rt.baton.resume(run.id, 'client', { strict: true });
    expect(resumed.resumed.action).toBe('requeued');
    const done = await settle(run.id);
    expect(done.status).toBe('succeeded');
    expect(done.output).toMatchObject({
      text: 'Battery health is good.',
      turns: 18,
      toolCalls: 17,
      wasResumed: true,
    });

    const again = await rt.baton.resume(run.id, 'client', { strict: true });
    expect(again.resumed.action).toBe('already_succeeded');
    expect((await again.result()).output).toMatchObject({ turns: 18 });
  });

  it('lets exactly one of many concurrent strict resumes proceed', async () => {
    rt = testRuntime();
    const run = await rt.baton.start(analyst(), { systemId: 'sys_9' });
    await settle(run.id);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => rt.baton.resume(run.id, 'client', { strict: true })),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    const conflicts = outcomes.filter(
      (o) => o.status === 'rejected' && isBatonError(o.reason, 'RUN_CONFLICT'),
    );
    expect(ok.length).toBe(1);
    expect(conflicts.length).toBe(19);
  });

  it('reports wasResumed: false when the checkpoint was rejected and the agent started fresh', async () => {
    rt = testRuntime();
    const run = await rt.baton.start(analyst(), { systemId: 'sys_7' });
    await settle(run.id);
    // Damage the saved conversation: the counters are no longer valid numbers.
    const db = new (sqliteDriver().Database)(join(rt.dir, 'baton.db'));
    db.prepare("UPDATE checkpoints SET state = json_set(state, '$.turnCount', -1) WHERE run_id = ?").run(
      run.id,
    );
    db.close();
    await rt.baton.resume(run.id, 'client', { strict: true });
    const parked = await settle(run.id);
    const kinds = (await rt.store.readEvents({ runId: run.id }))
      .filter((e) => e.type === 'task:event')
      .map((e) => (e.data as { kind: string }).kind);
    expect(kinds).toContain('checkpoint:rejected');
    // A fresh start from the prompt: 8 turns again in this invocation, and it says it was no resume.
    expect(parked).toMatchObject({ status: 'waiting', waitReason: 'resume' });
    expect(parked.meta.invocation).toMatchObject({ turns: 8, wasResumed: false });
  });

  it('answers from the final checkpoint when the run timed out after saving it, without another turn', async () => {
    rt = testRuntime();
    let calls = 0;
    const threeTurns = defineAgentTask({
      name: 'short',
      model: () =>
        createScriptedModel(
          (ctx) => {
            calls++;
            return ctx.turn >= 3
              ? { text: 'done in three', delayMs: 1_000 }
              : { toolCalls: [{ toolName: 'search', input: { q: `t${ctx.turn}` } }], delayMs: 1_000 };
          },
          { clock: rt.clock },
        ),
      prompt: () => 'Analyse the battery',
      tools: { search },
    });
    // The final save commits, then the process stalls past the 60 s limit (an overloaded server):
    // the run times out with the answer already in its checkpoint.
    const save = rt.store.saveCheckpoint.bind(rt.store);
    let stalled = false;
    rt.store.saveCheckpoint = async (...args) => {
      const saved = await save(...args);
      const state = args[1].state as { turnCount?: number };
      if (!stalled && state.turnCount === 3) {
        stalled = true;
        await rt.clock.sleep(70_000);
      }
      return saved;
    };
    const run = await rt.baton.start(threeTurns, {});
    const parked = await settle(run.id);
    expect(stalled).toBe(true);
    expect(parked).toMatchObject({ status: 'waiting', waitReason: 'resume' });
    expect(calls).toBe(3);

    await rt.baton.resume(run.id, 'client', { strict: true });
    const done = await settle(run.id);
    // Before, the resume made a fourth turn and answered turns = 4 (the HTTP bench's turns = 11).
    expect(done).toMatchObject({ status: 'succeeded', output: { text: 'done in three', turns: 3 } });
    expect(calls).toBe(3);
  });
});
