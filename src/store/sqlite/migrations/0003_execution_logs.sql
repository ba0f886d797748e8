-- The run history as the data-transfer protocol's `execution_logs` table, for db_query references.
CREATE VIEW IF NOT EXISTS execution_logs AS
  SELECT e.id AS log_id, e.run_id, e.root_id, r.name AS task, r.step_id, e.type AS event, e.at, e.data
  FROM events e LEFT JOIN runs r ON r.id = e.run_id;
