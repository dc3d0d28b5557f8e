-- Up Migration
-- The dynamic partitioner's controller (docs/partitioner.md, "Wired into the control plane"). Per deployment, what
-- the tenant lets it do: 'off' (never looked at), 'recommend' (the default: decisions are recorded and pushed,
-- nothing changes) or 'auto' (a decision's key-group moves are also made, through deployment_key_group_moves).
ALTER TABLE deployments ADD COLUMN partitioner_mode text NOT NULL DEFAULT 'recommend' CHECK (partitioner_mode IN ('off', 'recommend', 'auto'));
-- When the controller next looks at the deployment (NULL: at its first chance). Every look moves it one interval on
-- under the deployment's row lock, so of several control-plane instances exactly one plans each interval.
ALTER TABLE deployments ADD COLUMN partitioner_next_at timestamptz;

-- One row per decision worth keeping: one that moves key groups, or one that declines something other than the
-- hysteresis band (a hot key it may not split, a move the cool-down holds back, no move that helps), with what it was
-- decided on. Tenant-owned and bound by row-level security like every tenant table.
CREATE TABLE deployment_scaling_decisions (
  tenant_id        text NOT NULL REFERENCES tenants(id),
  deployment_id    text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  -- s + 12 hex digits of epoch ms + 12 random: time-ordered, so the newest-first list is an index scan.
  decision_id      text NOT NULL CHECK (decision_id ~ '^s[0-9a-f]{24}$'),
  -- The run whose load and routing it was planned on.
  run_no           integer NOT NULL CHECK (run_no > 0),
  -- Who decided: the partitioner (the autoscaler will write here too).
  source           text NOT NULL CHECK (source IN ('partitioner')),
  operator_id      text NOT NULL CHECK (operator_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  -- The deployment's partitioner mode when it was decided: 'recommend' decisions are never carried out.
  mode             text NOT NULL CHECK (mode IN ('recommend', 'auto')),
  kind             text NOT NULL CHECK (kind IN ('MOVE_KEY_GROUPS', 'DECLINED')),
  reason           text NOT NULL CHECK (length(reason) <= 4000),
  -- The key groups it moves (empty when it declined).
  key_groups       integer[] NOT NULL DEFAULT '{}',
  imbalance_before double precision NOT NULL,
  imbalance_after  double precision NOT NULL,
  -- Its budget stopped it above the aim: the next decision carries on (planPartitioning's `continuing`).
  unfinished       boolean NOT NULL,
  -- {"overloadedSubtasks": [...], "hotKeys": [...]}: what was flagged, with its evidence.
  detection        jsonb NOT NULL CHECK (jsonb_typeof(detection) = 'object'),
  -- planPartitioning's decision: moves with their evidence, declined actions with why, loads before and after.
  decision         jsonb NOT NULL CHECK (jsonb_typeof(decision) = 'object'),
  -- The load model it was planned on: key-group rates, capacities, heavy keys, the snapshots' window.
  inputs           jsonb NOT NULL CHECK (jsonb_typeof(inputs) = 'object'),
  -- In mode auto, the key-group move that carries it out.
  move_id          text,
  decided_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (deployment_id, decision_id),
  FOREIGN KEY (deployment_id, run_no) REFERENCES deployment_runs (deployment_id, run_no) ON DELETE CASCADE,
  FOREIGN KEY (deployment_id, move_id) REFERENCES deployment_key_group_moves (deployment_id, move_id) ON DELETE CASCADE,
  CHECK (move_id IS NULL OR (mode = 'auto' AND kind = 'MOVE_KEY_GROUPS'))
);
-- The controller reads the latest decision of each operator (for its cool-down and continuation).
CREATE INDEX deployment_scaling_decisions_by_operator ON deployment_scaling_decisions (deployment_id, operator_id, decision_id DESC);
ALTER TABLE deployment_scaling_decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_scaling_decisions_isolation ON deployment_scaling_decisions
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- The controller's scan across tenants, as weir_due_deployments is the reconciler's: ids alone, of this
-- installation's deployments that run in several processes (slots: the process count) with the partitioner on and
-- due. Everything else it reads and writes inside the tenant's own transaction, under RLS.
CREATE FUNCTION weir_partitioner_due(max_rows integer, for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d JOIN tenants t ON t.id = d.tenant_id
  WHERE d.installation = for_installation AND d.status = 'RUNNING' AND d.desired_state = 'RUNNING'
    AND d.partitioner_mode <> 'off' AND d.slots >= 2
    AND (d.partitioner_next_at IS NULL OR d.partitioner_next_at <= now())
    AND t.deleting_since IS NULL
  ORDER BY d.partitioner_next_at NULLS FIRST
  LIMIT max_rows
$$;

-- Down Migration
DROP FUNCTION weir_partitioner_due(integer, text);
DROP TABLE deployment_scaling_decisions;
ALTER TABLE deployments DROP COLUMN partitioner_next_at;
ALTER TABLE deployments DROP COLUMN partitioner_mode;
