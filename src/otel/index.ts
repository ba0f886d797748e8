/**
 * `baton/otel`: OpenTelemetry traces of runs, attempts, steps (model and tool calls with the GenAI
 * semantic conventions' names) and waits, with checkpoints, partial results and timeouts as span
 * events, continuing the same trace after a crash. Needs the optional peer `@opentelemetry/api`;
 * `import 'baton'` never loads this module.
 */

export { formatTraceparent, type ParsedTraceparent, parseTraceparent } from '../core/index.ts';
export { type Instrumentation, type InstrumentOptions, instrumentBaton } from './instrument.ts';
