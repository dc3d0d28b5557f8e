-- Up Migration
-- A deployment's scaling policy (docs/partitioner.md, "Scaling policy"), changed over the API while it runs and read
-- by the partitioner and the autoscaler at each look. The modes stay on deployments (partitioner_mode,
-- autoscaler_mode: the controllers' due scans filter on them); the rest is stored here once a tenant first changes
-- it. Without a row, the policy is the deployment's properties (partitioner.interval-ms, autoscaler.*) over the
-- defaults, as before this migration. Tenant-owned and bound by row-level security like every tenant table.
CREATE TABLE deployment_scaling_policies (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  deployment_id text PRIMARY KEY REFERENCES deployments(id) ON DELETE CASCADE,
  -- {"intervalMs", "moveBudget", "actAbove", "aimBelow", "coolDownMs", "maxMovePauseMs"}
  partitioner   jsonb NOT NULL CHECK (jsonb_typeof(partitioner) = 'object'),
  -- {"intervalMs", "targetUtilization", "scaleUpWindowMs", "scaleDownWindowMs", "cooldownMs", "catchUpMs",
  --  "minParallelism", "maxParallelism", "sloFraction"}
  autoscaler    jsonb NOT NULL CHECK (jsonb_typeof(autoscaler) = 'object'),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  -- The API key id of the last change.
  updated_by    text NOT NULL
);
ALTER TABLE deployment_scaling_policies ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_scaling_policies_isolation ON deployment_scaling_policies
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Every change, modes included, whichever route made it: who, when, the whole policy before and after.
CREATE TABLE deployment_scaling_policy_changes (
  tenant_id     text NOT NULL REFERENCES tenants(id),
  deployment_id text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  -- p + 12 hex digits of epoch ms + 12 random: time-ordered, so the newest-first list is an index scan.
  change_id     text NOT NULL CHECK (change_id ~ '^p[0-9a-f]{24}$'),
  changed_at    timestamptz NOT NULL DEFAULT now(),
  changed_by    text NOT NULL,
  from_policy   jsonb NOT NULL CHECK (jsonb_typeof(from_policy) = 'object'),
  to_policy     jsonb NOT NULL CHECK (jsonb_typeof(to_policy) = 'object'),
  -- The dotted names of the fields that changed ("autoscaler.mode", "partitioner.moveBudget").
  fields        text[] NOT NULL CHECK (cardinality(fields) > 0),
  PRIMARY KEY (deployment_id, change_id)
);
ALTER TABLE deployment_scaling_policy_changes ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_scaling_policy_changes_isolation ON deployment_scaling_policy_changes
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE deployment_scaling_policy_changes;
DROP TABLE deployment_scaling_policies;
