-- A root's events are read (SSE and the timeline of a tree, execution_logs scoped to a flow) and
-- swept by root. A top-level run is its own root, so for most events events_root held the same keys
-- as events_run, and every event insert wrote both (issue 18 item 3). events_root now holds only
-- the events of runs inside another run's tree; a root's own events are read through events_run.
-- Each query by root reads the two parts: `run_id = ? AND root_id = run_id` through events_run,
-- `root_id = ? AND root_id <> run_id` through this index (both columns are NOT NULL, so the two
-- parts are every event of the root, each once).
DROP INDEX IF EXISTS events_root;
CREATE INDEX events_root ON events (root_id, id) WHERE root_id <> run_id;

-- The same rows and columns, in the same order (by event id), scoped reads (`WHERE root_id = ?`)
-- pushed into both parts: a root's own events by run_id, its children's by the partial index.
DROP VIEW IF EXISTS execution_logs;
CREATE VIEW execution_logs AS
  SELECT e.id AS log_id, e.run_id, e.run_id AS root_id, r.name AS task, r.step_id, e.type AS event, e.at, e.data
  FROM events e LEFT JOIN runs r ON r.id = e.run_id WHERE e.root_id = e.run_id
  UNION ALL
  SELECT e.id AS log_id, e.run_id, e.root_id, r.name AS task, r.step_id, e.type AS event, e.at, e.data
  FROM events e LEFT JOIN runs r ON r.id = e.run_id WHERE e.root_id <> e.run_id
  ORDER BY log_id;
