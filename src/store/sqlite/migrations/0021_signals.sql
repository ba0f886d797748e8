-- Signals sent to a run (baton.signal / baton signal / POST /runs/:id/signals/:name), kept until a
-- ctx.waitFor reads them: each is read once, in the transaction that records the read as a step.
CREATE TABLE signals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,
  name TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  read_at INTEGER,
  read_key TEXT
);
CREATE INDEX signals_unread ON signals (run_id, name, seq) WHERE read_at IS NULL;
CREATE INDEX signals_run ON signals (run_id);
