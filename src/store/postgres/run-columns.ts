/**
 * A run read as an array of its columns, in a fixed order, for the two statements every run passes
 * through: its claim and the lock of the batch that ends it. node-postgres builds an object per row
 * with every column as a key, and `toRun` then builds the record: with `rowMode: 'array'` the row is
 * one array, decoded here straight into the record (issue 13: about 60 µs of Node CPU per no-op run
 * went to parsing answers, the rows' objects and their garbage part of it).
 *
 * The columns are named, not `*`: a position means the same column whatever a newer migration adds,
 * and a prepared claim's result type stays the same when the table gains a column under it.
 */
import type { RunStatus, SerializedError, WaitReason } from '../../core/index.ts';
import type { RunRecord } from '../records.ts';
import { parseJson, type RunRow } from '../rows.ts';

/** The columns of `runs` a RunRecord is made of, and `lease_claim` (Fence.claim), in array order. */
const COLUMNS = [
  'id',
  'parent_id',
  'root_id',
  'step_id',
  'kind',
  'name',
  'input',
  'status',
  'wait_reason',
  'wake_at',
  'attempt',
  'depends_on',
  'priority',
  'created_at',
  'started_at',
  'finished_at',
  'updated_at',
  'budget_ms',
  'deadline_at',
  'output',
  'error',
  'lease_owner',
  'lease_expires_at',
  'lease_token',
  'lease_claim',
  'source',
  'options',
  'meta',
  'expires_at',
] as const satisfies ReadonlyArray<keyof RunRow>;

/** How many values a run takes at the start of a row; what a statement selects after them follows. */
export const RUN_WIDTH = COLUMNS.length;

/** The column list of a run (`alias.` before each when given), for a SELECT or a RETURNING. */
export function runColumns(alias?: string): string {
  return alias === undefined ? COLUMNS.join(', ') : COLUMNS.map((c) => `${alias}.${c}`).join(', ');
}

/**
 * A run, and the claim that gave its lease, from a row whose first RUN_WIDTH values are runColumns():
 * what `toRun` makes of the same row as an object (rows.ts; `run-columns.test.ts` compares both).
 */
export function runFromArray(v: readonly unknown[]): { run: RunRecord; leaseClaim: string | null } {
  const run: RunRecord = {
    id: v[0] as string,
    parentId: v[1] as string | null,
    rootId: v[2] as string,
    stepId: v[3] as string | null,
    kind: v[4] as RunRecord['kind'],
    name: v[5] as string,
    input: parseJson(v[6] as string),
    status: v[7] as RunStatus,
    waitReason: v[8] as WaitReason | null,
    wakeAt: v[9] as number | null,
    attempt: v[10] as number,
    dependsOn: parseJson(v[11] as string, []) as string[],
    priority: v[12] as number,
    createdAt: v[13] as number,
    startedAt: v[14] as number | null,
    finishedAt: v[15] as number | null,
    updatedAt: v[16] as number,
    budgetMs: v[17] as number | null,
    deadlineAt: v[18] as number | null,
    output: parseJson(v[19] as string | null, undefined),
    error: parseJson(v[20] as string | null) as SerializedError | null,
    leaseOwner: v[21] as string | null,
    leaseExpiresAt: v[22] as number | null,
    leaseToken: v[23] as number,
    source: v[25] as string | null,
    options: parseJson(v[26] as string, {}) as Record<string, unknown>,
    meta: parseJson(v[27] as string, {}) as Record<string, unknown>,
    expiresAt: v[28] as number | null,
  };
  return { run, leaseClaim: (v[24] as string | null) ?? null };
}
