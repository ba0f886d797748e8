-- One index for leased runs instead of two (issue 18): runs_owner (lease_owner) and
-- runs_lease_expiry (lease_expires_at) each took an entry when a run was claimed and lost it when the
-- run ended, so every run's life wrote four index entries for its lease. runs_leased holds both
-- columns, in expiry order (what the next wake-up and recovery of expired leases read), and only
-- runs that hold a lease: flows are 'running' without one and never enter it. Finding one worker's
-- runs (heartbeat, release) reads this index whole; it holds only the runs being executed.
DROP INDEX IF EXISTS runs_owner;
DROP INDEX IF EXISTS runs_lease_expiry;
CREATE INDEX runs_leased ON runs (lease_expires_at, lease_owner)
  WHERE status = 'running' AND lease_owner IS NOT NULL;
