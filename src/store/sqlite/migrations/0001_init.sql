-- Baton schema, version 1: runs, memoized steps, checkpoints, partial findings, events, timers, workers.
-- Times are epoch milliseconds; JSON columns hold UTF-8 JSON text.

CREATE TABLE baton_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  parent_id TEXT,
  root_id TEXT NOT NULL,
  step_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('task', 'flow')),
  name TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL,
  wait_reason TEXT,
  wake_at INTEGER,
  attempt INTEGER NOT NULL DEFAULT 0,
  depends_on TEXT NOT NULL DEFAULT '[]',
  priority INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  updated_at INTEGER NOT NULL,
  budget_ms INTEGER,
  deadline_at INTEGER,
  output TEXT,
  error TEXT,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  lease_token INTEGER NOT NULL DEFAULT 0,
  source TEXT,
  options TEXT NOT NULL DEFAULT '{}',
  meta TEXT NOT NULL DEFAULT '{}',
  expires_at INTEGER
) STRICT;

-- The claim query: claimable task runs in priority then creation order.
CREATE INDEX runs_claimable ON runs (status, priority, id) WHERE kind = 'task' AND status IN ('queued', 'waiting');
CREATE INDEX runs_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX runs_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX runs_lease_expiry ON runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX runs_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
CREATE INDEX runs_expires ON runs (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX runs_top_level ON runs (id) WHERE parent_id IS NULL;

CREATE TABLE steps (
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  output TEXT,
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE checkpoints (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  state TEXT NOT NULL,
  record TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE partials (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  findings TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  root_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  data TEXT NOT NULL
) STRICT;
CREATE INDEX events_run ON events (run_id, id);
CREATE INDEX events_root ON events (root_id, id);

CREATE TABLE timers (
  id TEXT PRIMARY KEY,
  run_id TEXT,
  kind TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX timers_due ON timers (due_at);
CREATE INDEX timers_run ON timers (run_id) WHERE run_id IS NOT NULL;

CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  process_start TEXT,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
) STRICT;
