/**
 * The AI SDK's tool approval (needsApproval) answered as a Baton decision, offline with the AI
 * SDK's mock model on a real SQLite file and a manual clock: the request is an approve / deny
 * question on the run (waiting: decision), answered by a person after the process that asked has
 * closed, by a denial with a reason the model reads, or by the decision timeout's policy.
 */
import { join } from 'node:path';
import { generateText, type ModelMessage, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBaton, defineTask } from '../runtime/index.ts';
import { openSqliteStore } from '../store/index.ts';
import { advanceUntil, type TestRuntime, testRuntime } from '../testing/index.ts';
import { approveToolCalls, durableModel, durableTools } from './index.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
const USAGE: GenerateResult['usage'] = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};
const reply = (content: GenerateResult['content'], reason: 'stop' | 'tool-calls'): GenerateResult => ({
  content,
  finishReason: { unified: reason, raw: undefined },
  usage: USAGE,
  warnings: [],
});

let rt: TestRuntime;
afterEach(async () => rt?.dispose());

/** An agent that may delete a file only with a person's approval; the model is scripted. */
function setup(options: { timeout?: string } = {}) {
  const deleted: string[] = [];
  const prompts: string[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(JSON.stringify(prompt));
      return prompts.length === 1
        ? reply(
            [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'deleteFile', input: '{"path":"/tmp/x"}' }],
            'tool-calls',
          )
        : reply([{ type: 'text', text: 'all done' }], 'stop');
    },
  });
  const task = defineTask({
    name: 'janitor',
    run: async (_: unknown, ctx) => {
      const tools = durableTools(ctx, {
        deleteFile: tool({
          description: 'Deletes a file',
          inputSchema: z.object({ path: z.string() }),
          needsApproval: true,
          execute: async ({ path }) => {
            deleted.push(path);
            return { deleted: path };
          },
        }),
      });
      const messages: ModelMessage[] = [{ role: 'user', content: 'clean up /tmp/x' }];
      for (let turn = 0; turn < 4; turn++) {
        const r = await generateText({ model: durableModel(model, ctx), tools, messages });
        messages.push(...r.response.messages);
        const answers = await approveToolCalls(
          ctx,
          r.content,
          options.timeout ? { timeout: options.timeout } : {},
        );
        if (!answers) return { text: r.text, toolResults: r.toolResults.map((t) => t.output) };
        messages.push(answers);
      }
      throw new Error('too many turns');
    },
  });
  return { deleted, prompts, model, task };
}

async function waitingFor(id: string) {
  await advanceUntil(rt.clock, async () => (await rt.baton.getRun(id))?.waitReason === 'decision', {
    stepMs: 100,
  });
}

describe('approveToolCalls', () => {
  it('asks approve / deny as a decision on the run; an answer after a restart runs the tool once', async () => {
    rt = testRuntime();
    const { deleted, prompts, task } = setup();
    rt.baton.register(task);
    const h = await rt.baton.start(task, {});
    await waitingFor(h.id);
    const [question] = await rt.baton.openDecisions(h.id);
    expect(question?.request).toMatchObject({
      menu: 'approval',
      message: 'Approve deleteFile({"path":"/tmp/x"})?',
      choices: [
        { id: 'approve', label: 'Approve' },
        { id: 'deny', label: 'Deny' },
      ],
    });
    expect(deleted).toEqual([]);
    await expect(rt.baton.decide(h.id, 'skip')).rejects.toThrow(/answer\.choice.*"approve", "deny"/);

    // The process that asked goes away; another one answers and finishes the run.
    await rt.baton.close();
    // NORMAL as testRuntime's store: the manual clock does not wait for an fdatasync.
    const store = openSqliteStore(join(rt.dir, 'baton.db'), { clock: rt.clock, synchronous: 'NORMAL' });
    const again = createBaton({ store, clock: rt.clock, tasks: [task] });
    try {
      await again.decide(h.id, { choice: 'approve', reason: 'it is scratch space' }, 'ops@example.com');
      await expect(again.decide(h.id, 'deny')).rejects.toThrow(/RUN_CONFLICT|not waiting/);
      await advanceUntil(rt.clock, async () => (await again.getRun(h.id))?.status === 'succeeded', {
        stepMs: 100,
      });
      expect((await again.getRun(h.id))?.output).toEqual({ text: 'all done', toolResults: [] });
      expect(deleted).toEqual(['/tmp/x']);
      // The first completion was memoized: the replay after the answer did not pay for it again.
      expect(prompts).toHaveLength(2);
      expect(prompts[1]).toMatch(/"deleted":"\/tmp\/x"/);
      const made = (await store.readEvents({ runId: h.id, limit: 200 })).filter(
        (e) => e.type === 'decision:made',
      );
      expect(made.map((e) => e.data)).toEqual([
        {
          answer: { choice: 'approve', reason: 'it is scratch space' },
          by: 'ops@example.com',
          answeredBy: { kind: 'person', name: 'ops@example.com' },
          action: 'approved',
        },
      ]);
    } finally {
      await again.close();
      await store.close();
    }
  });

  it('a denial with a reason reaches the model as the tool’s denied result; the tool never runs', async () => {
    rt = testRuntime();
    const { deleted, prompts, task } = setup();
    rt.baton.register(task);
    const h = await rt.baton.start(task, {});
    await waitingFor(h.id);
    await rt.baton.decide(h.id, { choice: 'deny', reason: 'keep /tmp/x for the audit' }, 'mcp');
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(h.id))?.status === 'succeeded', {
      stepMs: 100,
    });
    expect(deleted).toEqual([]);
    expect(prompts[1]).toMatch(/execution-denied/);
    expect(prompts[1]).toMatch(/keep \/tmp\/x for the audit/);
  });

  it('past the decision timeout the policy denies, and the model is told why', async () => {
    rt = testRuntime();
    const { deleted, prompts, task } = setup({ timeout: '2m' });
    rt.baton.register(task);
    const h = await rt.baton.start(task, {});
    await waitingFor(h.id);
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(h.id))?.status === 'succeeded', {
      stepMs: 30_000,
    });
    expect(deleted).toEqual([]);
    expect(prompts[1]).toMatch(/no answer before the decision timeout \(denied by policy\)/);
    expect((await rt.baton.openDecisions(h.id)).length).toBe(0);
  });

  it('returns nothing when no approval was requested, and refuses what is not content', async () => {
    await expect(approveToolCalls({} as never, [{ type: 'text', text: 'hi' }])).resolves.toBeUndefined();
    await expect(approveToolCalls({} as never, 'nope' as never)).rejects.toThrow(/content/);
  });
});
