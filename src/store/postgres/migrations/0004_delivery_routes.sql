-- Mirrors SQLite migration 0009: each delivery names the route that can send it
-- (`callback:<name>`, `webhook:<name> <url>`); a process takes only the routes it serves.
ALTER TABLE deliveries ADD COLUMN route TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE deliveries SET route = CASE WHEN channel = 'callback' THEN 'callback:default' ELSE channel END;
DROP INDEX IF EXISTS deliveries_due;
CREATE INDEX deliveries_route_due ON deliveries (route, next_at) WHERE status = 'pending';
