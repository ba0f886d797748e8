/**
 * The statements a batch sends for many runs at once. In a batch's first try, a write's row-shaped
 * statement (a fence check, a run's planned update, new runs) joins an earlier one of the same
 * shape in the batch when nothing between them touches the same runs (batch-conn.ts): the ends of
 * forty runs become one UPDATE … FROM unnest(…) instead of forty, which is what the server's CPU
 * is spent on. Rows keep their order within a statement.
 */
import type { NewRun } from '../records.ts';
import { json } from '../rows.ts';
import type { RunColumn, RunUpdate } from '../run-rules.ts';
import type { RowStatement } from './batch-conn.ts';
import type { Tables } from './sql.ts';

/** Postgres types of the columns a transition or a flow may change (for unnest's typed arrays). */
const COLUMN_TYPES: Readonly<Record<RunColumn, string>> = {
  status: 'text',
  wait_reason: 'text',
  wake_at: 'bigint',
  output: 'text',
  error: 'text',
  finished_at: 'bigint',
  expires_at: 'bigint',
  input: 'text',
  attempt: 'integer',
  meta: 'text',
  updated_at: 'bigint',
  lease_owner: 'text',
  lease_expires_at: 'bigint',
};

/** Columns of `rows` (each row's i-th value) as the typed arrays unnest takes. */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, i) => rows.map((r) => r[i] ?? null));
}

const statements = new WeakMap<Tables, Map<string, RowStatement>>();

/** One statement shape per key and schema, made once. */
function shape(t: Tables, key: string, make: () => RowStatement['render']): RowStatement {
  let byKey = statements.get(t);
  if (!byKey) {
    byKey = new Map();
    statements.set(t, byKey);
  }
  let spec = byKey.get(key);
  if (!spec) {
    spec = { key, render: make() };
    byKey.set(key, spec);
  }
  return spec;
}

/**
 * Fence checks, one row (run id, lease token, claim name or null) each, each run's row locked to
 * COMMIT as an UPDATE would lock it. The statement fails (a division by zero)
 * unless every run is running under its token: the batch then runs again carefully, where the
 * check of each write reports LEASE_LOST on its own. A run appears once per statement.
 */
export function fenceCheck(t: Tables): RowStatement {
  return shape(t, 'fence', () => (rows) => ({
    text: `WITH f AS (SELECT 1 FROM ${t.runs} r, unnest($1::text[], $2::bigint[], $3::text[]) AS v(id, token, claim)
       WHERE r.id = v.id AND r.lease_token = v.token AND r.lease_claim IS NOT DISTINCT FROM v.claim
         AND r.status = 'running' FOR NO KEY UPDATE OF r)
     SELECT 1 / ((SELECT count(*) FROM f) = $4)::int`,
    values: [...columns(rows, 3), rows.length],
  }));
}

/** The planned update of one run, as a row: the id, then the values of `update.set` in order. */
export function runUpdateRow(update: RunUpdate): { spec: (t: Tables) => RowStatement; row: unknown[] } {
  const cols = update.set.map(([c]) => c);
  const key = `update:${cols.join(',')}:${update.ifStatus ?? ''}`;
  const spec = (t: Tables) =>
    shape(t, key, () => {
      const arrays = cols.map((c, i) => `$${i + 2}::${COLUMN_TYPES[c]}[]`).join(', ');
      const names = cols.map((_, i) => `c${i}`);
      const text = `UPDATE ${t.runs} r SET ${cols.map((c, i) => `${c} = v.${names[i]}`).join(', ')}
        FROM unnest($1::text[], ${arrays}) AS v(id, ${names.join(', ')})
        WHERE r.id = v.id${update.ifStatus ? ` AND r.status = $${cols.length + 2}` : ''}`;
      return (rows) => ({
        text,
        values: [...columns(rows, cols.length + 1), ...(update.ifStatus ? [update.ifStatus] : [])],
      });
    });
  return { spec, row: [update.ids[0], ...update.set.map(([, v]) => v)] };
}

/** New runs, one row each in the order of CREATE_COLUMNS (created_seq follows the rows' order). */
export const CREATE_COLUMNS = [
  ['id', 'text'],
  ['parent_id', 'text'],
  ['root_id', 'text'],
  ['step_id', 'text'],
  ['kind', 'text'],
  ['name', 'text'],
  ['input', 'text'],
  ['status', 'text'],
  ['wait_reason', 'text'],
  ['wake_at', 'bigint'],
  ['depends_on', 'text'],
  ['priority', 'integer'],
  ['budget_ms', 'bigint'],
  ['source', 'text'],
  ['options', 'text'],
  ['meta', 'text'],
  ['created_at', 'bigint'],
] as const;

type CreateColumn = (typeof CREATE_COLUMNS)[number][0];

/**
 * A new run as a row of CREATE_COLUMNS but the last (`created_at`, added when the write runs). JSON
 * values are serialized here: a value that is not JSON throws before anything is written.
 */
export function createRow(r: NewRun): unknown[] {
  const values: Record<Exclude<CreateColumn, 'created_at'>, unknown> = {
    id: r.id,
    parent_id: r.parentId ?? null,
    root_id: r.rootId ?? r.id,
    step_id: r.stepId ?? null,
    kind: r.kind,
    name: r.name,
    input: json(r.input),
    status: r.status,
    wait_reason: r.waitReason ?? null,
    wake_at: r.wakeAt ?? null,
    depends_on: json(r.dependsOn ?? []),
    priority: r.priority ?? 0,
    budget_ms: r.budgetMs ?? null,
    source: r.source ?? null,
    options: json(r.options ?? {}),
    meta: json(r.meta ?? {}),
  };
  return CREATE_COLUMNS.flatMap(([column]) => (column === 'created_at' ? [] : [values[column]]));
}

export function createRunsStatement(t: Tables): RowStatement {
  return shape(t, 'create', () => {
    const names = CREATE_COLUMNS.map(([c]) => c).join(', ');
    const arrays = CREATE_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
    const text = `INSERT INTO ${t.runs} (${names}, updated_at, started_at)
      SELECT ${names}, created_at,
        -- Flows are never claimed; they start when they are created.
        CASE WHEN status = 'running' THEN created_at END
      FROM unnest(${arrays}) WITH ORDINALITY AS r(${names}, n)
      ORDER BY n`;
    return (rows) => ({ text, values: columns(rows, CREATE_COLUMNS.length) });
  });
}
