/**
 * A run's row read as an array (better-sqlite3's raw mode) and made into a RunRow by an object
 * literal. In its default mode the driver builds each row's object natively, setting its 28 columns
 * one by one, which cost about as much as the read itself: a claim's read of 10 claimed runs took
 * 54 µs, 29 µs this way; a single row ≈ 8 → 5 µs (issue 18 item 3: the statements a run needs are
 * its main thread's time).
 */
import type { RunRow } from '../rows.ts';

/** The columns, in the order runRowOf reads them (`SELECT ${RUN_COLUMNS} FROM runs …`). */
export const RUN_COLUMNS = `id, parent_id, root_id, step_id, kind, name, input, status, wait_reason, wake_at, attempt,
  depends_on, priority, created_at, started_at, finished_at, updated_at, budget_ms, deadline_at, output, error,
  lease_owner, lease_expires_at, lease_token, source, options, meta, expires_at`;

/** How many values runRowOf reads; a statement's further columns follow them (`has_children`). */
export const RUN_COLUMN_COUNT = 28;

export function runRowOf(v: unknown[]): RunRow {
  return {
    id: v[0] as string,
    parent_id: v[1] as string | null,
    root_id: v[2] as string,
    step_id: v[3] as string | null,
    kind: v[4] as RunRow['kind'],
    name: v[5] as string,
    input: v[6] as string,
    status: v[7] as string,
    wait_reason: v[8] as string | null,
    wake_at: v[9] as number | null,
    attempt: v[10] as number,
    depends_on: v[11] as string,
    priority: v[12] as number,
    created_at: v[13] as number,
    started_at: v[14] as number | null,
    finished_at: v[15] as number | null,
    updated_at: v[16] as number,
    budget_ms: v[17] as number | null,
    deadline_at: v[18] as number | null,
    output: v[19] as string | null,
    error: v[20] as string | null,
    lease_owner: v[21] as string | null,
    lease_expires_at: v[22] as number | null,
    lease_token: v[23] as number,
    source: v[24] as string | null,
    options: v[25] as string,
    meta: v[26] as string,
    expires_at: v[27] as number | null,
  };
}
