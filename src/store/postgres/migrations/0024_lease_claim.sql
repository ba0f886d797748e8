-- The claim that holds a run's lease, named by its claimer (ClaimRequest.claim): a claim whose
-- commit is not waited for (synchronous_commit off) can be lost in a server crash, and the run's
-- next claim then gives it the same lease token again. A fenced write compares this too, so the
-- lost claim's attempt cannot write under the next one (claims.ts).
ALTER TABLE runs ADD COLUMN IF NOT EXISTS lease_claim text;
