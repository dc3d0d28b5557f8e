-- Up Migration
-- The installation a worker belongs to: the WEIR_QUEUE_PREFIX its events arrive under (as for deployments). Placement,
-- the LOST sweep and the fleet view see only their own installation's workers, so installations sharing a database
-- (test runs side by side) never place onto, or declare lost, each other's workers.
ALTER TABLE workers ADD COLUMN installation text NOT NULL DEFAULT 'weir' CHECK (installation ~ '^[a-z0-9_-]{1,100}$');
CREATE INDEX workers_installation_status_idx ON workers (installation, status);

-- Down Migration
DROP INDEX workers_installation_status_idx;
ALTER TABLE workers DROP COLUMN installation;
