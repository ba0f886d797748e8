/** Pure rules with no I/O: errors, ids, the run state machine, plans, flow progress, event types. */

export * from './budget/index.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './field-path.ts';
export * from './flow-progress.ts';
export * from './flow-timeouts.ts';
export * from './ids.ts';
export * from './json-depth.ts';
export * from './json-value.ts';
export * from './option-keys.ts';
export * from './plan.ts';
export * from './retry/index.ts';
export * from './run-state.ts';
export { formatTraceparent, type ParsedTraceparent, parseTraceparent } from './traceparent.ts';
