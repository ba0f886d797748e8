/**
 * baton/otel with an in-memory exporter, on a real SQLite file and a manual clock: the span tree of
 * a run (run → attempt → model/tool/step spans) with GenAI names, checkpoints, partials and
 * timeouts as span events, the caller's traceparent as the run's parent (also over HTTP), and a
 * resumed run continuing the same trace with a link to the span it continues.
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../http/index.ts';
import { defineTask } from '../runtime/index.ts';
import { advanceUntil, type TestRuntime, testRuntime } from '../testing/index.ts';
import { instrumentBaton } from './index.ts';

let rt: TestRuntime;
afterEach(async () => rt?.dispose());

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('baton-test') };
}

const byName = (spans: ReadableSpan[], name: string) => spans.find((s) => s.name === name) as ReadableSpan;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
/** Instrumentation handles events after their commit, asynchronously: let it catch up. */
async function settle(exporter: InMemorySpanExporter, check: (spans: ReadableSpan[]) => boolean) {
  for (let i = 0; i < 200 && !check(exporter.getFinishedSpans()); i++)
    await new Promise((r) => setImmediate(r));
  return exporter.getFinishedSpans();
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER = '00f067aa0ba902b7';

describe('instrumentBaton', () => {
  it('traces a run as run → attempt → model/tool/step spans, with checkpoints and partials as events', async () => {
    rt = testRuntime();
    const { exporter, tracer } = tracing();
    const inst = instrumentBaton(rt.baton, { tracer });
    const task = defineTask({
      name: 'research',
      budget: '10m',
      run: async (_: unknown, ctx) => {
        await ctx.step('ai:model:generate:abc123:0', () => 'plan');
        await ctx.step('ai:tool:search:call-1', () => ({ hits: 3 }));
        await ctx.step('fetch-1', () => 'page');
        await ctx.partial({ claim: 'one' });
        await ctx.checkpoint({ next: 1 }, { itemsAnalyzed: 1, itemsTotal: 2 });
        return 'done';
      },
    });
    const h = await rt.baton.start(task, {}, { traceparent: `00-${TRACE}-${CALLER}-01` });
    await h.result();
    const spans = await settle(exporter, (s) => s.some((x) => x.name === 'invoke_agent research'));
    inst.close();
    const run = byName(spans, 'invoke_agent research');
    const attempt = byName(spans, 'attempt 1');
    expect(run.spanContext().traceId).toBe(TRACE);
    expect(parentOf(run)).toBe(CALLER);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'research',
      'baton.run.id': h.id,
      'baton.budget_ms': 600_000,
      'baton.run.status': 'succeeded',
    });
    expect(parentOf(attempt)).toBe(run.spanContext().spanId);
    const chat = byName(spans, 'chat');
    const toolSpan = byName(spans, 'execute_tool search');
    expect(chat.attributes['gen_ai.operation.name']).toBe('chat');
    expect(toolSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search',
      'gen_ai.tool.call.id': 'call-1',
    });
    expect(byName(spans, 'step fetch-1')).toBeDefined();
    for (const s of [chat, toolSpan]) expect(parentOf(s)).toBe(attempt.spanContext().spanId);
    expect(attempt.events.map((e) => e.name)).toEqual(['partial_result', 'checkpoint']);
    expect(attempt.events[1]?.attributes).toMatchObject({
      'baton.checkpoint.seq': 1,
      'baton.progress_percentage': 50,
    });
    // The run span's context is stored with the run, for whoever takes it over.
    expect((await rt.baton.getRun(h.id))?.meta.traceparent).toBe(
      `00-${TRACE}-${run.spanContext().spanId}-01`,
    );
  });

  it('records a timeout as a span event with an error status, and the retry as a new attempt', async () => {
    rt = testRuntime();
    const { exporter, tracer } = tracing();
    const inst = instrumentBaton(rt.baton, { tracer });
    const task = defineTask({
      name: 'slow',
      timeout: '10s',
      retry: { maxRetries: 1, backoff: ['1s'] },
      run: async (_: unknown, ctx) => {
        await ctx.partial({ found: ctx.attempt });
        if (ctx.attempt === 1) await ctx.delay(60_000);
        return 'ok';
      },
    });
    const h = await rt.baton.start(task, {});
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(h.id))?.status === 'succeeded', {
      stepMs: 1_000,
    });
    const spans = await settle(exporter, (s) => s.some((x) => x.name === 'invoke_agent slow'));
    inst.close();
    const first = byName(spans, 'attempt 1');
    expect(first.status.code).toBe(2); // ERROR
    expect(first.events.find((e) => e.name === 'timeout')?.attributes).toMatchObject({
      'baton.timeout_ms': 10_000,
      'baton.findings': 1,
    });
    expect(byName(spans, 'attempt 2').status.code).not.toBe(2);
    expect(spans.some((s) => s.name === 'wait timer')).toBe(true);
  });

  it('continues the trace when another instrumented process resumes the run, linked to the span it continues', async () => {
    rt = testRuntime();
    const a = tracing();
    const instA = instrumentBaton(rt.baton, { tracer: a.tracer });
    const task = defineTask({
      name: 'flaky',
      retry: { maxRetries: 0 },
      run: async (_: unknown, ctx) => {
        if (ctx.attempt === 1) throw new Error('source down');
        return 'recovered';
      },
    });
    rt.baton.register(task);
    const h = await rt.baton.start(task, {});
    await advanceUntil(
      rt.clock,
      async () => ['failed', 'waiting', 'partial'].includes((await rt.baton.getRun(h.id))?.status ?? ''),
      { stepMs: 1_000 },
    );
    const first = (await settle(a.exporter, (s) => s.some((x) => x.name === 'invoke_agent flaky'))).find(
      (s) => s.name === 'invoke_agent flaky',
    ) as ReadableSpan;
    instA.close(); // the process that traced it is gone
    const b = tracing();
    const instB = instrumentBaton(rt.baton, { tracer: b.tracer });
    const stored = (await rt.baton.getRun(h.id))?.meta.traceparent;
    expect(stored).toContain(first.spanContext().spanId);
    const run = await rt.baton.getRun(h.id);
    if (run?.status === 'waiting') await rt.baton.decide(h.id, { choice: 'retry_extended' });
    else await rt.baton.resume(h.id);
    await advanceUntil(rt.clock, async () => (await rt.baton.getRun(h.id))?.status === 'succeeded', {
      stepMs: 1_000,
    });
    const again = (await settle(b.exporter, (s) => s.some((x) => x.name === 'invoke_agent flaky'))).find(
      (s) => s.name === 'invoke_agent flaky',
    ) as ReadableSpan;
    instB.close();
    expect(again.spanContext().traceId).toBe(first.spanContext().traceId);
    expect(again.links[0]?.context.spanId).toBe(first.spanContext().spanId);
    expect(again.attributes['baton.resumed']).toBe(true);
  });

  it('keeps the traceparent header of POST /runs with the run (invalid ones are ignored)', async () => {
    rt = testRuntime();
    rt.baton.register(defineTask({ name: 'echo', run: async () => 'hi' }));
    const handler = createHttpHandler(rt.baton);
    const post = (traceparent: string) =>
      handler(
        new Request('http://local/runs', {
          method: 'POST',
          headers: { 'content-type': 'application/json', traceparent },
          body: JSON.stringify({ task: 'echo', input: {}, mode: 'async' }),
        }),
      );
    const good = (await (await post(`00-${TRACE}-${CALLER}-01`)).json()) as {
      jobId?: string;
      run?: { id: string };
    };
    const bad = (await (await post('00-zz-nothex-01')).json()) as { jobId?: string; run?: { id: string } };
    const idOf = (b: { jobId?: string; run?: { id: string } }) => (b.run?.id ?? b.jobId) as string;
    expect((await rt.baton.getRun(idOf(good)))?.options.traceparent).toBe(`00-${TRACE}-${CALLER}-01`);
    expect((await rt.baton.getRun(idOf(bad)))?.options.traceparent).toBeUndefined();
    handler.close();
  });
});
