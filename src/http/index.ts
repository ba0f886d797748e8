/**
 * Baton's HTTP API (`baton/http`): runs, resume (protocol 003's resumable jobs: sync mode with the
 * 408 body, resume by job id, cached results, resume locks), decisions, cancel, SSE events, health
 * and Prometheus metrics, as one fetch handler for Node, serverless functions and edge runtimes.
 *
 * @example
 *   const server = await serveHttp(baton, { port: 8080 });            // loopback, no token needed
 *   export default { fetch: createHttpHandler(baton, { token }) };     // any fetch-style runtime
 */
export { BULK_LIMIT, type BulkAnswer } from './bulk-routes.ts';
export { createHttpHandler, type HttpHandler } from './create-http-handler.ts';
export { HTTP_OPTION_KEYS, type HttpOptions } from './http-options.ts';
export type { DecisionsPage, DeliveriesPage } from './inbox-routes.ts';
export {
  type Counter,
  type Gauge,
  type Histogram,
  type Labels,
  MetricsRegistry,
  MS_BUCKETS,
} from './metrics-registry.ts';
export type { Health } from './ops-routes.ts';
export type { Overview } from './overview-route.ts';
export type { RunDetails, RunPage } from './read-routes.ts';
export type {
  BulkRequestBody,
  CancelRequestBody,
  ResumeRequestBody,
  StartRequestBody,
} from './request-schemas.ts';
export type { AttemptPlan, BudgetView, RunInsight } from './run-insight.ts';
export { type BatonMetrics, createBatonMetrics, measureStore } from './run-metrics.ts';
export { invocationTimeoutMs } from './run-routes.ts';
export type { RunRow } from './run-selection.ts';
export type { InvocationFacts, RunView } from './run-views.ts';
export { type HttpServer, isLoopback, type ServeHttpOptions, serveHttp } from './serve-http.ts';
export {
  type AcceptedBody,
  type DecisionBody,
  type SuccessBody,
  type TimeoutBody,
  timeoutCode,
} from './sync-outcome.ts';
export type { CheckpointView, Timeline } from './timeline-route.ts';
export { type ErrorBody, HttpCodes, STATUS_BY_CODE } from './wire-errors.ts';
