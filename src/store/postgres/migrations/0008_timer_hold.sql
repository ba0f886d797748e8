-- A taken timer is hidden until taken_until instead of deleted: if its taker dies before handling
-- it (a SIGKILLed worker, a lost connection), it comes due again; the worker deletes it once its
-- handler has run. Handlers are guarded transitions, so a timer taken twice has its effect once.
ALTER TABLE timers ADD COLUMN taken_until BIGINT;
