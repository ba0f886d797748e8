-- Deliveries of scheduled tool results (protocol 004) to channels other than the event stream:
-- callbacks in code and webhooks. One row per (run, kind, channel) — the idempotency key — so a
-- result is handed to each channel exactly once; a row being sent is invisible until next_at, so a
-- sender that dies mid-send is retried with the same key.
CREATE TABLE deliveries (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  channel TEXT NOT NULL,
  target TEXT NOT NULL,
  payload TEXT NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
) STRICT;
CREATE INDEX deliveries_due ON deliveries (next_at) WHERE status = 'pending';
CREATE INDEX deliveries_run ON deliveries (run_id);
