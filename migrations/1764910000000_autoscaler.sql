-- Up Migration
-- The autoscaler's controller (docs/partitioner.md, "Autoscaler"), the partitioner's sibling. Per deployment, what the
-- tenant lets it do: 'off' (never looked at), 'recommend' (the default: decisions are recorded and pushed, nothing
-- changes) or 'auto' (a SCALE_UP or SCALE_DOWN also asks for the live rescale, as PATCH {parallelism} does).
ALTER TABLE deployments ADD COLUMN autoscaler_mode text NOT NULL DEFAULT 'recommend' CHECK (autoscaler_mode IN ('off', 'recommend', 'auto'));
-- When the autoscaler next looks (NULL: at its first chance); every look moves it one interval on under the row lock.
ALTER TABLE deployments ADD COLUMN autoscaler_next_at timestamptz;
-- What the autoscaler carries from one look to the next: the need being stabilized ({"direction", "sinceMs",
-- "parallelism"}) and the last source backlog sample ({"atMs", "records"}), so its growth gives the ingest rate.
ALTER TABLE deployments ADD COLUMN autoscaler_state jsonb CHECK (autoscaler_state IS NULL OR jsonb_typeof(autoscaler_state) = 'object');

-- The autoscaler records its decisions beside the partitioner's (one list, one subscription): SCALE_UP and SCALE_DOWN
-- with the parallelism from and to, HOLD when a need is left alone (to the partitioner, or for want of slots or room
-- within the bounds) with the reason.
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_source_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_source_check CHECK (source IN ('partitioner', 'autoscaler'));
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_kind_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_kind_check CHECK (
  (source = 'partitioner' AND kind IN ('MOVE_KEY_GROUPS', 'DECLINED')) OR (source = 'autoscaler' AND kind IN ('SCALE_UP', 'SCALE_DOWN', 'HOLD'))
);
-- The run's process count when decided and the parallelism recommended (equal for a HOLD); NULL for the partitioner's.
ALTER TABLE deployment_scaling_decisions ADD COLUMN from_parallelism integer CHECK (from_parallelism > 0);
ALTER TABLE deployment_scaling_decisions ADD COLUMN to_parallelism integer CHECK (to_parallelism > 0);
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_parallelism_check CHECK (
  (source = 'autoscaler') = (from_parallelism IS NOT NULL AND to_parallelism IS NOT NULL)
);
-- Each controller reads its own latest decision of a deployment (the autoscaler's repeat check).
CREATE INDEX deployment_scaling_decisions_by_source ON deployment_scaling_decisions (deployment_id, source, decision_id DESC);

-- The autoscaler's scan across tenants, as weir_partitioner_due is the partitioner's: ids alone, of this
-- installation's running deployments with the autoscaler on and due (one process is enough: it may scale out of it).
CREATE FUNCTION weir_autoscaler_due(max_rows integer, for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d JOIN tenants t ON t.id = d.tenant_id
  WHERE d.installation = for_installation AND d.status = 'RUNNING' AND d.desired_state = 'RUNNING'
    AND d.autoscaler_mode <> 'off'
    AND (d.autoscaler_next_at IS NULL OR d.autoscaler_next_at <= now())
    AND t.deleting_since IS NULL
  ORDER BY d.autoscaler_next_at NULLS FIRST
  LIMIT max_rows
$$;
-- It runs every second on every control-plane instance.
CREATE INDEX deployments_autoscaler_due_idx ON deployments (autoscaler_next_at NULLS FIRST)
  WHERE status = 'RUNNING' AND autoscaler_mode <> 'off';

-- Down Migration
DROP INDEX deployments_autoscaler_due_idx;
DROP FUNCTION weir_autoscaler_due(integer, text);
DROP INDEX deployment_scaling_decisions_by_source;
DELETE FROM deployment_scaling_decisions WHERE source = 'autoscaler';
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_parallelism_check;
ALTER TABLE deployment_scaling_decisions DROP COLUMN to_parallelism;
ALTER TABLE deployment_scaling_decisions DROP COLUMN from_parallelism;
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_kind_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_kind_check CHECK (kind IN ('MOVE_KEY_GROUPS', 'DECLINED'));
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_source_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_source_check CHECK (source IN ('partitioner'));
ALTER TABLE deployments DROP COLUMN autoscaler_state;
ALTER TABLE deployments DROP COLUMN autoscaler_next_at;
ALTER TABLE deployments DROP COLUMN autoscaler_mode;
