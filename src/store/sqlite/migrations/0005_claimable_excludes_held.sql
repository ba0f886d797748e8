-- Only queued runs and runs waiting on a retry timer can be claimed. Held deliveries, decisions and
-- parked jobs also wait, and there can be many of them: keep them out of the claim index so a
-- claim never walks them.
DROP INDEX IF EXISTS runs_claimable;
CREATE INDEX runs_claimable ON runs (priority DESC, id)
  WHERE kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'));
