-- Each delivery names the route that can send it: `callback:<name>` for a process whose onDelivery
-- has that name, `webhook:<name> <url>` for a process that configures that webhook with that URL.
-- A process takes only the routes it can serve; the others stay pending for a process that can
-- (issue 11 item 2: a worker without the app's callback must never mark it delivered).
-- Rows written before this had no route: a callback went to whichever process took it (now the
-- default callback), a webhook by its name only.
ALTER TABLE deliveries ADD COLUMN route TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET route = CASE WHEN channel = 'callback' THEN 'callback:default' ELSE channel END;
DROP INDEX IF EXISTS deliveries_due;
CREATE INDEX deliveries_route_due ON deliveries (route, next_at) WHERE status = 'pending';
