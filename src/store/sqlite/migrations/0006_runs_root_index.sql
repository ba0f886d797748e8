-- The TTL sweep finds every run of an expired tree by its root: without this index each sweep
-- scanned the whole runs table (1.2-2.4 s of a blocked event loop at 635,000 runs).
CREATE INDEX IF NOT EXISTS runs_root ON runs (root_id);
