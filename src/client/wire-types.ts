/**
 * The HTTP API's answers as the client sees them: the server's own types (src/http builds each
 * body typed by them), imported as types only, so the client has no second copy to drift.
 */
import type {
  AcceptedBody,
  BulkAnswer,
  BulkRequestBody,
  CancelRequestBody,
  DecisionBody,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Health,
  Overview,
  ResumeRequestBody,
  RunDetails,
  RunPage,
  RunRow,
  RunView,
  StartRequestBody,
  SuccessBody,
  Timeline,
  TimeoutBody,
} from '../http/index.ts';

export type {
  AcceptedBody,
  BulkAnswer,
  BulkRequestBody,
  CancelRequestBody,
  DecisionBody,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Health,
  Overview,
  ResumeRequestBody,
  RunDetails,
  RunPage,
  RunRow,
  RunView,
  StartRequestBody,
  SuccessBody,
  Timeline,
  TimeoutBody,
};

/**
 * The runs list's filters, also what a bulk action selects by: the status, wait reason, task or flow
 * name, the budget's time status now, and created at or after / before instants (epoch ms or ISO
 * 8601). The server's bulk body's `filter`, as a client writes it.
 */
export type RunFilter = NonNullable<BulkRequestBody['filter']>;

/** What one sync request (start or resume) came back with. */
export type SyncAnswer =
  | { kind: 'result'; body: SuccessBody }
  | { kind: 'timeout'; body: TimeoutBody }
  | { kind: 'decision'; body: DecisionBody };
