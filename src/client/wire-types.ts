/** The HTTP API's answers as the client sees them (types only; shared with src/http). */
import type { ErrorBody, RunView, SuccessBody } from '../http/index.ts';

export type { ErrorBody, RunView, SuccessBody };

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

/** 202 when a sync run stopped to wait for a decision. */
export interface DecisionBody {
  success: true;
  jobId: string;
  status: 'waiting';
  waitReason: 'decision';
  decision: unknown;
}

/** What one sync request (start or resume) came back with. */
export type SyncAnswer =
  | { kind: 'result'; body: SuccessBody }
  | { kind: 'timeout'; body: TimeoutBody }
  | { kind: 'decision'; body: DecisionBody };

export interface RunDetails {
  success: true;
  run: RunView;
  steps?: RunView[];
  decision: { runId: string; request: unknown } | null;
}

export interface RunPage {
  success: true;
  runs: RunView[];
  nextCursor: string | null;
}

export interface Health {
  ok: boolean;
  store: { dialect: string; ok: boolean; error?: string };
  workers: { registered: number | null; here: { id: string; running: number } | null };
  runs: Record<string, number> | null;
}
