/** Pure rules with no I/O: errors, run state machine, plan validation, events, policies. */
export * from './errors.ts';
