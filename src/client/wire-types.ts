/**
 * The HTTP API's answers as the client sees them: the server's own types (src/http builds each
 * body typed by them), imported as types only, so the client has no second copy to drift.
 */
import type { RunStatus, TimeStatus, WaitReason } from '../core/index.ts';
import type {
  AcceptedBody,
  BulkAnswer,
  DecisionBody,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Health,
  Overview,
  RunDetails,
  RunPage,
  RunRow,
  RunView,
  SuccessBody,
  Timeline,
  TimeoutBody,
} from '../http/index.ts';

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
  RunPage,
  RunRow,
  RunView,
  SuccessBody,
  Timeline,
  TimeoutBody,
};

/** The runs list's filters, also what a bulk action selects by (the client's query, not an answer). */
export interface RunFilter {
  status?: RunStatus;
  waitReason?: WaitReason;
  /** The task or flow name. */
  name?: string;
  /** The budget's time status now. */
  budgetStatus?: TimeStatus;
  /** Created at or after / before these instants (epoch ms or ISO 8601). */
  createdAfter?: number | string;
  createdBefore?: number | string;
}

/** What one sync request (start or resume) came back with. */
export type SyncAnswer =
  | { kind: 'result'; body: SuccessBody }
  | { kind: 'timeout'; body: TimeoutBody }
  | { kind: 'decision'; body: DecisionBody };
