-- Up Migration
-- Live rescales (docs/deployments.md, "Rescaling"). How the tenant asked the pending parallelism change to be made:
-- 'live' (the default: key groups move to joining processes, or off retiring ones, while the job runs; a restart
-- where the run cannot) or 'restart' (stop and restore at the new parallelism). NULL while nothing is pending.
ALTER TABLE deployments ADD COLUMN pending_rescale_mode text CHECK (pending_rescale_mode IN ('live', 'restart'));

-- One row per live rescale the reconciler starts (a RUNNING deployment with a pending parallelism, mode live).
-- PENDING (joiners being placed) → JOINING (joiners recorded in the run's layout, their run-subtasks and the
-- rescale-run command to send) → MOVING (process 0 moves key groups; moved/total its progress) → DONE (the report is
-- the run's new layout), or FAILED (given up: slots not found in time, run lost, desired state changed) or FELL_BACK
-- (refused by process 0 or not possible live: the deployment restarts at the new parallelism instead). Tenant-owned
-- and bound by row-level security like every tenant table.
CREATE TABLE deployment_rescales (
  tenant_id        text NOT NULL REFERENCES tenants(id),
  deployment_id    text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  -- r + 12 hex digits of epoch ms + 12 random: time-ordered, so "the latest" is an index scan.
  rescale_id       text NOT NULL CHECK (rescale_id ~ '^r[0-9a-f]{24}$'),
  -- The run rescaled in place: it keeps its number.
  run_no           integer NOT NULL CHECK (run_no > 0),
  -- The deployment's parallelism before and the one asked for ({"default", "operators"}).
  from_parallelism jsonb NOT NULL CHECK (jsonb_typeof(from_parallelism) = 'object'),
  to_parallelism   jsonb NOT NULL CHECK (jsonb_typeof(to_parallelism) = 'object'),
  from_processes   integer NOT NULL CHECK (from_processes > 0),
  to_processes     integer NOT NULL CHECK (to_processes > 0),
  state            text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'JOINING', 'MOVING', 'DONE', 'FAILED', 'FELL_BACK')),
  -- What the rescale does or waits for now, in words; once settled, why it ended so.
  reason           text NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
  -- Key groups moved of those to move, as process 0 reports them (its command's progress, then its report).
  moved            integer NOT NULL DEFAULT 0 CHECK (moved >= 0),
  total            integer NOT NULL DEFAULT 0 CHECK (total >= 0),
  -- The worker's RescaleReport: {"rescaleId", "processes", "parallelism", "routing", "moved": [...], "durationMs"}.
  report           jsonb,
  requested_at     timestamptz NOT NULL DEFAULT now(),
  -- When the joiners were placed and recorded in the run's layout (also for a rescale without joiners).
  joined_at        timestamptz,
  -- When the rescale-run command first went to process 0's worker.
  started_at       timestamptz,
  finished_at      timestamptz,
  PRIMARY KEY (deployment_id, rescale_id),
  FOREIGN KEY (deployment_id, run_no) REFERENCES deployment_runs (deployment_id, run_no) ON DELETE CASCADE,
  CHECK ((state IN ('PENDING', 'JOINING', 'MOVING')) = (finished_at IS NULL)),
  CHECK (state <> 'DONE' OR report IS NOT NULL)
);
-- One live rescale in flight per deployment, whichever instance starts it.
CREATE UNIQUE INDEX deployment_rescales_in_flight ON deployment_rescales (deployment_id) WHERE state IN ('PENDING', 'JOINING', 'MOVING');
ALTER TABLE deployment_rescales ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_rescales_isolation ON deployment_rescales
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE deployment_rescales;
ALTER TABLE deployments DROP COLUMN pending_rescale_mode;
