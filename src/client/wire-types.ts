/** The HTTP API's answers as the client sees them (types only; shared with src/http). */
import type { RunStatus, TimeStatus, WaitReason } from '../core/index.ts';
import type {
  BulkAnswer,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Overview,
  RunRow,
  RunView,
  SuccessBody,
  Timeline,
} from '../http/index.ts';

export type {
  BulkAnswer,
  DecisionsPage,
  DeliveriesPage,
  ErrorBody,
  Overview,
  RunRow,
  RunView,
  SuccessBody,
  Timeline,
};

/** The runs list's filters, also what a bulk action selects by. */
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

/** 202 for an async start or resume. */
export interface AcceptedBody {
  success: true;
  jobId: string;
  status: string;
}

/** The protocol's 408 body. */
export interface TimeoutBody extends ErrorBody {
  details: { jobId: string; canResume: boolean; wasResumed: boolean; durationMs: number; timeoutMs: number };
}

/** 202 when a sync run (or, for a flow, one of its steps) stopped to wait for a decision. */
export interface DecisionBody {
  success: true;
  jobId: string;
  /** `waiting` for a task; a flow whose step asks is still `running`. */
  status: RunStatus;
  waitReason: 'decision';
  decision: unknown;
  /** For a flow: the step run that asks (the answer may go to the flow's id when only one asks). */
  stepRunId?: string;
  stepId?: string | null;
  /** Every open question when several steps ask at once. */
  decisions?: Array<{ runId: string; stepId: string | null; request: unknown }>;
}

/** What one sync request (start or resume) came back with. */
export type SyncAnswer =
  | { kind: 'result'; body: SuccessBody }
  | { kind: 'timeout'; body: TimeoutBody }
  | { kind: 'decision'; body: DecisionBody };

export interface RunDetails {
  success: true;
  now: number;
  run: RunRow;
  steps?: RunRow[];
  decision: { runId: string; request: unknown } | null;
}

export interface RunPage {
  success: true;
  now: number;
  runs: RunRow[];
  nextCursor: string | null;
}

export interface Health {
  ok: boolean;
  store: { dialect: string; ok: boolean; error?: string };
  workers: { registered: number | null; here: { id: string; running: number } | null };
  runs: Record<string, number> | null;
}
