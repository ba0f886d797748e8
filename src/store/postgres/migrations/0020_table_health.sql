-- Storage settings for the tables Baton updates and deletes from all day (issue 13 item 5).
-- fillfactor leaves room on each page so an updated row version can stay on its page (a HOT update:
-- no index entries written, and the old version is pruned without a vacuum). The autovacuum
-- thresholds are per table and far lower than the defaults (20 % of the table), so small hot tables
-- are vacuumed after a few hundred dead rows instead of after their size doubles, and the cost
-- delay is off for them (they are small: a vacuum is quick). These apply to new pages; existing
-- data keeps its layout until rewritten.

-- runs: every claim, heartbeat, checkpoint fence and transition updates a row.
ALTER TABLE runs SET (
  fillfactor = 80,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 500,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_cost_delay = 0
);

-- timers and deliveries: taken (updated), then deleted or settled, at the rate work arrives.
ALTER TABLE timers SET (
  fillfactor = 70,
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 200,
  autovacuum_vacuum_cost_delay = 0
);
ALTER TABLE deliveries SET (
  fillfactor = 80,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 200,
  autovacuum_vacuum_cost_delay = 0
);

-- workers: a handful of rows, each updated by every heartbeat.
ALTER TABLE workers SET (
  fillfactor = 50,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 100,
  autovacuum_vacuum_cost_delay = 0
);

-- events, steps, checkpoints: appended, then deleted in batches by the TTL sweep. Vacuumed after a
-- smaller share of deleted rows so the space is reused by the next inserts instead of growing the
-- table; an insert-driven vacuum keeps the visibility map current for index-only reads.
ALTER TABLE events SET (
  autovacuum_vacuum_scale_factor = 0.05,
  autovacuum_vacuum_insert_scale_factor = 0.05
);
ALTER TABLE steps SET (autovacuum_vacuum_scale_factor = 0.05);
ALTER TABLE checkpoints SET (autovacuum_vacuum_scale_factor = 0.05);
