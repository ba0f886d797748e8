/**
 * OpenTelemetry traces from Baton's event log: a span per run (`invoke_agent <task>`), attempt,
 * memoized step (model calls as `chat`, tool calls as `execute_tool`, with the GenAI semantic
 * conventions' names), and wait (for a decision, a delivery, a timer, a resume); checkpoints,
 * partial results, timeouts and time-mode changes as span events; time status as attributes.
 *
 * It listens to the store's committed events, so it costs nothing inside the engine and sees each
 * event once it is durable. A run's span context is stored with the run (`meta.traceparent`); a
 * process that takes the run back after a crash opens a new run span in the same trace, as a child
 * of the caller's context, linked to the span it continues.
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { BatonEvent } from '../core/index.ts';
import { formatTraceparent, parseTraceparent } from '../core/index.ts';
import { type Baton, runMetaOf, runOptionsOf } from '../runtime/index.ts';
import type { RunRecord } from '../store/index.ts';

export interface InstrumentOptions {
  /** @default trace.getTracer('baton') from the global provider */
  tracer?: Tracer;
}

interface RunSpans {
  run: Span;
  attempt?: Span;
  wait?: Span;
  name: string;
}

const TERMINAL: Record<string, 'ok' | 'error'> = {
  'run:succeeded': 'ok',
  'run:partial': 'ok',
  'run:failed': 'error',
  'run:cancelled': 'error',
  'run:expired': 'error',
};

function remoteContext(traceparent: unknown): Context | undefined {
  const t = parseTraceparent(traceparent);
  if (!t) return undefined;
  return trace.setSpanContext(context.active(), { ...t, isRemote: true });
}

/** What a memoized step's key says it was: a model call, a tool call, or a plain step. */
function stepSpan(key: string): { name: string; attributes: Attributes } {
  const parts = key.split(':');
  if (parts[0] === 'ai' && parts[1] === 'model')
    return { name: 'chat', attributes: { 'gen_ai.operation.name': 'chat', 'baton.step.key': key } };
  if (parts[0] === 'ai' && parts[1] === 'tool')
    return {
      name: `execute_tool ${parts[2]}`,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': parts[2] ?? '',
        'gen_ai.tool.call.id': parts.slice(3).join(':'),
        'baton.step.key': key,
      },
    };
  return { name: `step ${key}`, attributes: { 'baton.step.key': key } };
}

export interface Instrumentation {
  /** Stops listening and ends the spans still open (as they stand). */
  close(): void;
}

export function instrumentBaton(baton: Baton, options: InstrumentOptions = {}): Instrumentation {
  const tracer = options.tracer ?? trace.getTracer('baton');
  const open = new Map<string, RunSpans>();
  // Events are handled in commit order; a run's first event may need its record (async).
  let queue = Promise.resolve();

  const startRun = async (e: BatonEvent): Promise<RunSpans | undefined> => {
    const run = await baton.getRun(e.runId);
    if (!run) return undefined;
    const stored = parseTraceparent(runMetaOf(run).traceparent);
    const callerTrace = runOptionsOf(run).traceparent;
    const parent = run.parentId ? open.get(run.parentId)?.run : undefined;
    const ctx = parent
      ? trace.setSpan(context.active(), parent)
      : (remoteContext(callerTrace) ?? context.active());
    const resumed = e.type !== 'run:created' && stored !== undefined;
    const links: Link[] =
      resumed && stored
        ? [{ context: { ...stored, isRemote: true }, attributes: { 'baton.link': 'continues' } }]
        : [];
    // Taken back after a crash with no caller context: stay in the run's first trace.
    const parentCtx =
      resumed && stored && !parent && !callerTrace
        ? trace.setSpanContext(context.active(), { ...stored, isRemote: true })
        : ctx;
    const span = tracer.startSpan(
      `invoke_agent ${run.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: e.at,
        links,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': run.name,
          'baton.run.id': run.id,
          'baton.run.kind': run.kind,
          ...(run.budgetMs !== null ? { 'baton.budget_ms': run.budgetMs } : {}),
          ...(resumed ? { 'baton.resumed': true } : {}),
        },
      },
      parentCtx,
    );
    const spans: RunSpans = { run: span, name: run.name };
    open.set(run.id, spans);
    if (!stored) {
      const sc = span.spanContext();
      await baton.store
        .transition(run.id, { meta: { traceparent: formatTraceparent(sc) } }, [])
        .catch(() => {});
    }
    return spans;
  };

  const endWait = (s: RunSpans, at: number) => {
    s.wait?.end(at);
    delete s.wait;
  };

  const handle = async (e: BatonEvent) => {
    let s = open.get(e.runId);
    if (!s) {
      if (TERMINAL[e.type] && e.type !== 'run:created') {
        // A run that ended before we saw it start (e.g. a cached result): nothing to trace.
      }
      if (
        e.type === 'run:created' ||
        e.type === 'attempt:started' ||
        e.type === 'run:resumed' ||
        e.type === 'run:queued'
      )
        s = await startRun(e);
      if (!s) return;
    }
    const d = e.data as Record<string, unknown>;
    const active = s.attempt ?? s.run;
    switch (e.type) {
      case 'attempt:started': {
        endWait(s, e.at);
        s.attempt?.end(e.at);
        s.attempt = tracer.startSpan(
          `attempt ${d.attempt}`,
          {
            startTime: e.at,
            attributes: {
              'baton.attempt': Number(d.attempt),
              ...(typeof d.timeoutMs === 'number' ? { 'baton.timeout_ms': d.timeoutMs } : {}),
              ...(typeof d.resumedFrom === 'number'
                ? { 'baton.resumed_from_checkpoint': d.resumedFrom }
                : {}),
            },
          },
          trace.setSpan(context.active(), s.run),
        );
        return;
      }
      case 'attempt:succeeded':
      case 'attempt:failed':
      case 'attempt:timed_out': {
        if (!s.attempt) return;
        if (e.type === 'attempt:timed_out') {
          s.attempt.addEvent(
            'timeout',
            { 'baton.timeout_ms': Number(d.timeoutMs), 'baton.findings': Number(d.findings) },
            e.at,
          );
          s.attempt.setStatus({ code: SpanStatusCode.ERROR, message: `timed out after ${d.timeoutMs} ms` });
        } else if (e.type === 'attempt:failed') {
          const err = d.error as { code?: string; message?: string } | undefined;
          s.attempt.setStatus({ code: SpanStatusCode.ERROR, message: err?.message ?? 'failed' });
          if (err?.code) s.attempt.setAttribute('error.type', err.code);
        }
        s.attempt.end(e.at);
        delete s.attempt;
        return;
      }
      case 'step:completed': {
        const { name, attributes } = stepSpan(String(d.key));
        tracer
          .startSpan(
            name,
            { startTime: e.at - Number(d.durationMs ?? 0), attributes },
            trace.setSpan(context.active(), active),
          )
          .end(e.at);
        return;
      }
      case 'checkpoint:saved':
        active.addEvent(
          'checkpoint',
          {
            'baton.checkpoint.seq': Number(d.seq),
            ...(typeof d.progressPercentage === 'number'
              ? { 'baton.progress_percentage': d.progressPercentage }
              : {}),
            ...(typeof d.itemsAnalyzed === 'number' ? { 'baton.items_analyzed': d.itemsAnalyzed } : {}),
            ...(typeof d.timeStatus === 'string' ? { 'baton.time_status': d.timeStatus } : {}),
            ...(typeof d.remainingSeconds === 'number'
              ? { 'baton.remaining_seconds': d.remainingSeconds }
              : {}),
          },
          e.at,
        );
        if (typeof d.timeStatus === 'string') s.run.setAttribute('baton.time_status', d.timeStatus);
        if (typeof d.remainingSeconds === 'number')
          s.run.setAttribute('baton.remaining_seconds', d.remainingSeconds);
        return;
      case 'partial:recorded':
        active.addEvent('partial_result', { 'baton.findings': Number(d.total) }, e.at);
        return;
      case 'time:mode_changed':
        active.addEvent(
          'time_mode_changed',
          { 'baton.mode': String(d.to), 'baton.time_status': String(d.timeStatus) },
          e.at,
        );
        s.run.setAttribute('baton.time_status', String(d.timeStatus));
        return;
      case 'run:waiting': {
        endWait(s, e.at);
        s.wait = tracer.startSpan(
          `wait ${d.reason}`,
          { startTime: e.at, attributes: { 'baton.wait.reason': String(d.reason) } },
          trace.setSpan(context.active(), s.run),
        );
        if (d.reason === 'resume') {
          // Parked for a client to resume: the run span ends here; a resume opens a linked one.
          endWait(s, e.at);
          s.run.setAttribute('baton.parked', true);
          s.run.end(e.at);
          open.delete(e.runId);
        }
        return;
      }
      case 'run:queued':
      case 'decision:made':
      case 'run:resumed':
        endWait(s, e.at);
        return;
      default: {
        const outcome = TERMINAL[e.type];
        if (!outcome) return;
        endWait(s, e.at);
        s.attempt?.end(e.at);
        if (outcome === 'error') {
          const err = d.error as { code?: string; message?: string } | undefined;
          s.run.setStatus({
            code: SpanStatusCode.ERROR,
            message: err?.message ?? String(d.reason ?? e.type),
          });
          if (err?.code) s.run.setAttribute('error.type', err.code);
        }
        s.run.setAttribute('baton.run.status', e.type.slice(4));
        s.run.end(e.at);
        open.delete(e.runId);
      }
    }
  };

  const unsubscribe = baton.store.onEvents((events) => {
    for (const e of events) queue = queue.then(() => handle(e)).catch(() => {});
  });
  return {
    close() {
      unsubscribe();
      for (const s of open.values()) {
        s.wait?.end();
        s.attempt?.end();
        s.run.end();
      }
      open.clear();
    },
  };
}

export type { RunRecord };
