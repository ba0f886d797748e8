/**
 * The rest of the API over real HTTP: async starts, listing with a cursor, a flow with its steps,
 * decisions, cancel, health, and Prometheus metrics whose text parses and whose numbers follow the
 * runs (checkpoint save/load times, resume success rate, compression ratio).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../src/client/index.ts';
import { agentJob, drive, protocolScript } from '../src/http/fixtures/agent-jobs.ts';
import { createBatonMetrics, type HttpServer, measureStore, serveHttp } from '../src/http/index.ts';
import { createBaton, defineTask } from '../src/runtime/index.ts';
import { type TestRuntime, testRuntime } from '../src/testing/index.ts';

let rt: TestRuntime | undefined;
let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  await rt?.dispose();
  rt = undefined;
  server = undefined;
});

const double = defineTask({ name: 'double', run: async (input: { n: number }) => input.n * 2 });
const asker = defineTask({
  name: 'external-research',
  retry: false,
  escalation: { ask: true },
  run: async () => {
    throw new Error('search API down');
  },
});

/** Resolves once `check` holds, looking again on every turn (driven by a manual clock). */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise<void>((resolve) => setImmediate(resolve));
}

async function setup() {
  rt = testRuntime();
  rt.baton.register(double, asker);
  server = await serveHttp(rt.baton);
  return { rt, client: createClient({ baseUrl: server.url, clock: rt.clock }) };
}

describe('runs', () => {
  it('starts async (202 with the job id), lists with a cursor, and shows a run', async () => {
    const { rt, client } = await setup();
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const accepted = await client.start('double', { n });
      expect(accepted.success).toBe(true);
      // The in-process worker claims a new run in the commit that creates it, when it has room.
      expect(['queued', 'running']).toContain(accepted.status);
      ids.push(accepted.jobId);
    }
    for (const id of ids) await rt.baton.result(id);
    const page1 = await client.list({ limit: 3 });
    const page2 = await client.list({ limit: 3, cursor: page1.nextCursor ?? '' });
    // Newest first by id; ids made in the same millisecond (a manual clock) have no order among them.
    const listed = [...page1.runs, ...page2.runs].map((r) => r.id);
    expect(listed).toEqual([...listed].sort().reverse());
    expect([...listed].sort()).toEqual([...ids].sort());
    expect(page1.runs).toHaveLength(3);
    expect(page2.nextCursor).toBeNull();
    expect((await client.list({ status: 'failed' })).runs).toEqual([]);
    const shown = await client.get(ids[2] as string);
    expect(shown.run).toMatchObject({ id: ids[2], status: 'succeeded', output: 4 });
    expect(shown.decision).toBeNull();
  });

  it('starts a JSON plan and shows the flow with its steps', async () => {
    const { rt, client } = await setup();
    const plan = {
      name: 'doubles',
      steps: [
        { id: 'a', task: 'double', input: { n: 1 } },
        { id: 'b', task: 'double', input: { n: 2 }, dependsOn: ['a'] },
      ],
    };
    const accepted = await client.startFlow(plan);
    await rt.baton.result(accepted.jobId);
    const shown = await client.get(accepted.jobId);
    expect(shown.run).toMatchObject({ kind: 'flow', name: 'doubles', status: 'succeeded' });
    expect(shown.steps?.map((s) => [s.stepId, s.status, s.output])).toEqual([
      ['a', 'succeeded', 2],
      ['b', 'succeeded', 4],
    ]);
  });

  it('answers a sync run that waits for a decision with 202 and the question; the answer goes to /decisions', async () => {
    const { rt, client } = await setup();
    const answer = await drive(rt.clock, client.call('external-research', {}));
    expect(answer.kind).toBe('decision');
    const jobId = answer.kind === 'decision' ? answer.body.jobId : '';
    const shown = await client.get(jobId);
    expect(shown.decision?.runId).toBe(jobId);
    expect(shown.decision?.request).toMatchObject({
      choices: expect.arrayContaining([expect.objectContaining({ id: 'abandon' })]),
    });
    const decided = await client.decide(jobId, 'abandon');
    expect(decided).toMatchObject({ status: 'failed', error: { code: 'NON_RETRIABLE' } });
    expect(decided.error).not.toHaveProperty('stack');
    const again = await client.decide(jobId, 'abandon').catch((e: unknown) => e);
    expect(again).toMatchObject({ status: 409, errorCode: 'RUN_CONFLICT' });
  });

  it('answers a sync flow whose step asks with 202 and the question of that step; the answer may go to the flow', async () => {
    const { rt, client } = await setup();
    const plan = {
      name: 'research-then-double',
      steps: [
        { id: 'research', task: 'external-research' },
        { id: 'after', task: 'double', input: { n: 3 } },
      ],
    };
    const answer = await drive(rt.clock, client.callFlow(plan));
    expect(answer.kind).toBe('decision');
    if (answer.kind !== 'decision') return;
    const flowId = answer.body.jobId;
    expect(answer.body).toMatchObject({
      status: 'running',
      waitReason: 'decision',
      stepRunId: `${flowId}.research`,
      stepId: 'research',
      decision: { choices: expect.arrayContaining([expect.objectContaining({ id: 'skip' })]) },
    });
    const decided = await client.decide(flowId, 'skip');
    expect(decided).toMatchObject({ id: `${flowId}.research`, stepId: 'research' });
    const done = await drive(rt.clock, rt.baton.result(flowId));
    expect(done.status).not.toBe('running');
    const steps = (await client.get(flowId)).steps ?? [];
    expect(steps.find((x) => x.stepId === 'after')).toMatchObject({ status: 'succeeded', output: 6 });
  });

  it('refuses an answer sent to a flow with several open questions, naming the steps', async () => {
    const { rt, client } = await setup();
    const plan = {
      name: 'two-askers',
      steps: [
        { id: 'one', task: 'external-research' },
        { id: 'two', task: 'external-research' },
      ],
    };
    const answer = await drive(rt.clock, client.callFlow(plan));
    if (answer.kind !== 'decision') throw new Error(`expected a decision, got ${answer.kind}`);
    const flowId = answer.body.jobId;
    // The first step to ask may answer the request before the second asks; wait for both.
    await drive(
      rt.clock,
      waitFor(async () => (await rt?.baton.openDecisions(flowId))?.length === 2),
    );
    const refused = await client.decide(flowId, 'skip').catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 409, errorCode: 'RUN_CONFLICT' });
    expect((refused as Error).message).toContain(`${flowId}.one`);
    expect((refused as Error).message).toContain(`${flowId}.two`);
    expect(await client.decide(`${flowId}.one`, 'skip')).toMatchObject({ stepId: 'one' });
  });

  it('runs a slow flow to its end through 408s and resumes (client.runFlow)', async () => {
    const { rt, client } = await setup();
    const slow = defineTask({
      name: 'slow-double',
      run: async (input: { n: number }, ctx) => {
        await ctx.delay(5_000);
        return input.n * 2;
      },
    });
    rt.baton.register(slow);
    const plan = {
      name: 'slow-then-double',
      steps: [
        { id: 'slow', task: 'slow-double', input: { n: 5 } },
        { id: 'after', task: 'double', input: { n: 1 }, dependsOn: ['slow'] },
      ],
    };
    const phases: string[] = [];
    const result = await drive(
      rt.clock,
      client.runFlow(plan, undefined, {
        timeoutMs: 1_000,
        backoff: { initialMs: 100, maxMs: 500 },
        onProgress: (p) => phases.push(p.phase),
      }),
    );
    expect(result).toMatchObject({ status: 'succeeded' });
    expect(result.resumes).toBeGreaterThan(0);
    expect(phases).toContain('timeout');
    const shown = await client.get(result.jobId);
    expect(shown.run).toMatchObject({ kind: 'flow', status: 'succeeded' });
    expect(Object.fromEntries(shown.steps?.map((x) => [x.stepId, x.output]) ?? [])).toEqual({
      slow: 10,
      after: 2,
    });
  });

  it('cancels a running job', async () => {
    rt = testRuntime();
    const job = agentJob(rt.clock, protocolScript);
    rt.baton.register(job.task);
    server = await serveHttp(rt.baton);
    const client = createClient({ baseUrl: server.url, clock: rt.clock });
    const { jobId } = await client.start('insights', {});
    const cancelled = await client.cancel(jobId, 'changed my mind');
    expect(cancelled.status).toBe('cancelled');
    const types = (await rt.store.readEvents({ runId: jobId, limit: 100 })).map((e) => e.type);
    expect(types).toContain('run:cancelled');
  });
});

describe('health and metrics', () => {
  it('reports the store, the workers and runs by status', async () => {
    const { client } = await setup();
    await client.call('double', { n: 1 });
    expect(await client.health()).toEqual({
      ok: true,
      store: { dialect: 'sqlite', ok: true, warnings: [] },
      workers: { registered: 1, here: { id: expect.any(String), running: 0 } },
      runs: {
        queued: 0,
        running: 0,
        waiting: 0,
        succeeded: 1,
        partial: 0,
        failed: 0,
        cancelled: 0,
        expired: 0,
      },
    });
  });

  it('exposes Prometheus text that parses, with checkpoint times, resume success and compression', async () => {
    const base = testRuntime();
    rt = base;
    const metrics = createBatonMetrics(base.clock);
    // A second handle on the same file with a measured store: checkpoint calls are timed.
    const baton = createBaton({ store: measureStore(base.store, metrics, base.clock), clock: base.clock });
    await base.baton.close();
    const job = agentJob(base.clock, protocolScript, {
      compression: { threshold: 2, keepFirst: 1, keepLast: 1 },
    });
    baton.register(job.task);
    server = await serveHttp(baton, { metrics });
    const client = createClient({ baseUrl: server.url, clock: base.clock });
    const done = await drive(base.clock, client.run('insights', {}, { backoff: { initialMs: 100 } }));
    expect(done).toMatchObject({ status: 'succeeded', resumes: 1 });
    const text = await client.metrics();
    const samples = parsePrometheus(text);
    expect(samples.get('baton_runs{status="succeeded"}')).toBe(1);
    expect(samples.get('baton_checkpoint_save_ms_count')).toBeGreaterThanOrEqual(2);
    // A run's first lease reads no checkpoint (nothing can have been written yet): the resumed
    // attempt's load is the one timed.
    expect(samples.get('baton_checkpoint_load_ms_count')).toBeGreaterThanOrEqual(1);
    expect(samples.get('baton_resumes_total')).toBe(1);
    expect(samples.get('baton_resume_success_ratio')).toBe(1);
    expect(samples.get('baton_resume_overhead_ms_count')).toBe(1);
    expect(samples.get('baton_history_compression_ratio_count')).toBeGreaterThanOrEqual(1);
    expect(samples.get('baton_http_requests_total{method="POST",route="/runs",status="408"}')).toBe(1);
    // The SQLite store's own figures (a manual clock: its holds read 0 ms).
    expect(samples.get('baton_sqlite_commits')).toBeGreaterThan(0);
    expect(samples.get('baton_sqlite_write_hold_max_ms')).toBe(0);
    expect(samples.get('baton_sqlite_checkpoints{held="yes"}')).toBe(0);
    await server.close();
    server = undefined;
    await baton.close();
  });
});

/**
 * A strict reader of the text exposition format: every line is a HELP, a TYPE or a sample of a
 * declared family; histogram buckets are cumulative and end at +Inf with the count.
 */
function parsePrometheus(text: string): Map<string, number> {
  const declared = new Map<string, string>();
  const samples = new Map<string, number>();
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    const help = /^# HELP ([a-zA-Z_:][\w:]*) .+$/.exec(line);
    const type = /^# TYPE ([a-zA-Z_:][\w:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (help) continue;
    if (type) {
      declared.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample =
      /^([a-zA-Z_:][\w:]*)(\{(?:[a-zA-Z_]\w*="(?:[^"\\\n]|\\.)*"(?:,|(?=\})))*\})? (-?[\d.e+-]+|NaN|[+-]Inf)$/.exec(
        line,
      );
    expect(sample, `not a valid line: ${line}`).not.toBeNull();
    const name = sample?.[1] as string;
    const family = [...declared.keys()].find((f) => name === f || name.startsWith(`${f}_`));
    expect(family, `sample ${name} before its TYPE`).toBeDefined();
    samples.set(
      `${name}${sample?.[2] ?? ''}`,
      Number(sample?.[3] === '+Inf' ? Number.POSITIVE_INFINITY : sample?.[3]),
    );
  }
  for (const [family, type] of declared) {
    if (type !== 'histogram') continue;
    const buckets = [...samples].filter(([k]) => k.startsWith(`${family}_bucket`)).map(([, v]) => v);
    for (let i = 1; i < buckets.length; i++)
      expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1] as number);
    if (buckets.length > 0) expect(buckets.at(-1)).toBe(samples.get(`${family}_count`));
  }
  return samples;
}
