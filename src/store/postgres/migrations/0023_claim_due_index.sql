-- A claim walked runs_claimable in (priority, id) order, and that index also held every run asleep
-- on a timer (sleeps, retry backoffs, delayed starts): with 100,000 asleep for later, every claim
-- stepped over all of them to reach a run it could take. As on SQLite (its migration 0023), runs
-- claimable with no wake time keep the claim order, and runs with one are found by when they come
-- due, searched up to now, so a claim reads only runs it can take.
DROP INDEX IF EXISTS runs_claimable;
CREATE INDEX runs_claimable ON runs (priority DESC, id)
  WHERE kind = 'task' AND status = 'queued' AND wake_at IS NULL;
CREATE INDEX runs_claimable_due ON runs (wake_at)
  WHERE kind = 'task' AND (status = 'queued' OR (status = 'waiting' AND wait_reason = 'timer'))
    AND wake_at IS NOT NULL;
