-- Claims read claimable task runs in (priority DESC, id) order. An index in that order, limited
-- to the rows that can be claimed, lets SQLite walk it without a sort and without touching the
-- finished runs that stay in the table until their TTL.
DROP INDEX IF EXISTS runs_claimable;
CREATE INDEX runs_claimable ON runs (priority DESC, id) WHERE kind = 'task' AND status IN ('queued', 'waiting');
