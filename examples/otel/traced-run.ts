/**
 * OpenTelemetry traces of a Baton run (`baton/otel`), offline: an in-memory exporter collects the
 * spans of a research task that times out once, retries with a longer timeout and finishes, and
 * the example prints the span tree with its events. In production, pass your own tracer (or
 * register a global TracerProvider with an OTLP exporter) instead.
 *
 *   npx tsx examples/otel/traced-run.ts
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { defineTask } from '../../src/index.ts';
import { instrumentBaton } from '../../src/otel/index.ts';
import { advanceUntil, testRuntime } from '../../src/testing/index.ts';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

// A manual clock makes the 60 s of simulated research take no time at all.
const rt = testRuntime();
const instrumentation = instrumentBaton(rt.baton, { tracer: provider.getTracer('example') });

const research = defineTask({
  name: 'research',
  timeout: '20s',
  budget: '10m',
  retry: { backoff: ['5s', '15s'] },
  run: async (_: unknown, ctx) => {
    const start = (ctx.lastCheckpoint?.state as { next: number } | undefined)?.next ?? 0;
    for (let i = start; i < 4; i++) {
      const claim = await ctx.step(`ai:tool:search:call-${i}`, async () => {
        await ctx.delay(ctx.attempt === 1 ? 8_000 : 2_000); // the first attempt is slow
        return `claim ${i}`;
      });
      await ctx.partial({ claim });
      await ctx.checkpoint({ next: i + 1 }, { itemsAnalyzed: i + 1, itemsTotal: 4 });
    }
    return { claims: 4 };
  },
});

const run = await rt.baton.start(
  research,
  {},
  { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
);
await advanceUntil(rt.clock, async () => (await rt.baton.getRun(run.id))?.status === 'succeeded', {
  stepMs: 500,
  maxMs: 600_000,
});
for (let i = 0; i < 100 && !exporter.getFinishedSpans().some((s) => s.name.startsWith('invoke_agent')); i++)
  await new Promise((r) => setImmediate(r));
instrumentation.close();

const spans = exporter.getFinishedSpans();
const children = (id: string | undefined) => spans.filter((s) => s.parentSpanContext?.spanId === id);
const ms = (s: ReadableSpan) => s.duration[0] * 1000 + Math.round(s.duration[1] / 1e6);
function print(s: ReadableSpan, depth: number) {
  const status = s.status.code === 2 ? ` ERROR (${s.status.message})` : '';
  console.log(`${'  '.repeat(depth)}${s.name}  ${ms(s)} ms${status}`);
  for (const e of s.events)
    console.log(`${'  '.repeat(depth + 1)}· ${e.name} ${JSON.stringify(e.attributes)}`);
  for (const c of children(s.spanContext().spanId)) print(c, depth + 1);
}
const root = spans.find((s) => s.name === 'invoke_agent research') as ReadableSpan;
console.log(
  `trace ${root.spanContext().traceId} (parent ${root.parentSpanContext?.spanId} from the caller's traceparent)`,
);
print(root, 0);
await rt.dispose();
