-- A claim walked runs_claimable in (priority, id) order and read each run to check its wake time:
-- with 40,000 runs asleep for an hour ahead of 1,000 that were due, every claim stepped over all
-- 40,000 (10-30 ms a claim). Now runs that are claimable without a wake time keep the claim order,
-- and runs with one (sleeps, retry backoffs, delayed starts) are found by when they come due, so a
-- claim reads only runs it can take.
DROP INDEX IF EXISTS runs_claimable;
CREATE INDEX runs_claimable ON runs (priority DESC, id)
  WHERE kind = 'task' AND status = 'queued' AND wake_at IS NULL;
CREATE INDEX runs_claimable_due ON runs (wake_at)
  WHERE kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'))
    AND wake_at IS NOT NULL;
