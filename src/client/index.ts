/**
 * A typed client for Baton's HTTP API (`baton/client`): start, run (resuming automatically on the
 * protocol's 408 with backoff, reporting progress and an estimated time remaining), resume, get,
 * list, decide, cancel, and a run's events over SSE with Last-Event-ID reconnects.
 *
 * @example
 *   const client = createClient({ baseUrl: 'http://127.0.0.1:8080' });
 *   const done = await client.run('insights', { systemId: 'sys_123' }, {
 *     onProgress: (p) => console.log(`${p.turns} turns, ~${p.estimatedRemainingMs} ms left`),
 *   });
 */
export {
  type BatonClient,
  type BulkTarget,
  type ClientOptions,
  createClient,
  type RunOptions,
  type StartRequest,
  type SyncRequest,
} from './create-client.ts';
export { type EstimateInput, estimateRemainingMs } from './estimate-remaining.ts';
export type { EventsOptions } from './follow-events.ts';
export { BatonHttpError } from './http-error.ts';
export {
  type BackoffOptions,
  backoffMs,
  type ResumeLoopOptions,
  type RunProgress,
  type RunResult,
} from './run-with-resume.ts';
export { type SseMessage, SseParser } from './sse-parser.ts';
export type {
  AcceptedBody,
  BulkAnswer,
  DecisionBody,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Health,
  Overview,
  RunDetails,
  RunFilter,
  RunPage,
  RunRow,
  RunView,
  SuccessBody,
  SyncAnswer,
  Timeline,
  TimeoutBody,
} from './wire-types.ts';
