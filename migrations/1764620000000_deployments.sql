-- Up Migration
-- Deployments: what a tenant asked for (desired state, bundle, parallelism, config) beside what the reconciler
-- observes (status). Runs and transitions are the history. All three are tenant-owned and bound by row-level
-- security like every tenant table; the reconciler reaches them platform-wide only through the two SECURITY
-- DEFINER functions at the end, which return ids and slot counts, never rows.
-- bundle_id's foreign key to bundles is added by 1764620000001 (bundles live in another migration range).
CREATE TABLE deployments (
  tenant_id          text NOT NULL REFERENCES tenants(id),
  id                 text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name               text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  bundle_id          text NOT NULL,
  -- {"default": n, "operators": {"<operatorId>": n}}
  parallelism        jsonb NOT NULL,
  config             jsonb NOT NULL DEFAULT '{}'::jsonb,
  desired_state      text NOT NULL CHECK (desired_state IN ('RUNNING', 'SUSPENDED', 'CANCELLED')),
  status             text NOT NULL DEFAULT 'CREATED' CHECK (status IN ('CREATED', 'STARTING', 'RUNNING', 'RESCALING',
                       'RECOVERING', 'UPGRADING', 'STOPPING', 'SUSPENDED', 'FAILED', 'FINISHED', 'CANCELLED')),
  status_reason      text NOT NULL DEFAULT 'created',
  -- A requested upgrade not yet complete: {"bundleId", "mode", "requestedAt"}.
  pending_upgrade    jsonb,
  -- A requested parallelism change not yet applied (same shape as parallelism).
  pending_parallelism jsonb,
  -- Number of the latest run (0: never started); the run row holds its worker.
  run_no             integer NOT NULL DEFAULT 0,
  -- When the reconciler should look at this deployment next; NULL: only when something changes it.
  next_reconcile_at  timestamptz DEFAULT now(),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  status_changed_at  timestamptz NOT NULL DEFAULT now()
);
-- A name is taken until its deployment is cancelled.
CREATE UNIQUE INDEX deployments_tenant_name_live ON deployments (tenant_id, name) WHERE desired_state <> 'CANCELLED';
CREATE INDEX deployments_tenant_id_idx ON deployments (tenant_id, id);
CREATE INDEX deployments_due_idx ON deployments (next_reconcile_at) WHERE next_reconcile_at IS NOT NULL;
ALTER TABLE deployments ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployments_isolation ON deployments
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- One row per start of a deployment: where it ran, what it ran, and how it ended.
CREATE TABLE deployment_runs (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  deployment_id  text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  run_no         integer NOT NULL CHECK (run_no > 0),
  worker_id      text NOT NULL,
  bundle_id      text NOT NULL,
  -- The subtasks sent in run-subtasks: [{"operatorId", "subtask", "keyGroups"}].
  subtasks       jsonb NOT NULL,
  slots          integer NOT NULL CHECK (slots > 0),
  -- What the run restores from; NULL: a fresh start (always, until checkpoints exist: issue 5).
  restore_from   jsonb,
  started_reason text NOT NULL,
  placed_at      timestamptz NOT NULL DEFAULT now(),
  dispatched_at  timestamptz,
  running_at     timestamptz,
  stop_sent_at   timestamptz,
  ended_at       timestamptz,
  outcome        text CHECK (outcome IN ('STOPPED', 'FAILED', 'FINISHED', 'LOST', 'REPLACED')),
  end_reason     text,
  PRIMARY KEY (deployment_id, run_no)
);
CREATE INDEX deployment_runs_open_idx ON deployment_runs (worker_id) WHERE ended_at IS NULL;
ALTER TABLE deployment_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_runs_isolation ON deployment_runs
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Every change of observed status, with its reason.
CREATE TABLE deployment_transitions (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  id             bigserial PRIMARY KEY,
  deployment_id  text NOT NULL REFERENCES deployments(id) ON DELETE CASCADE,
  from_status    text,
  to_status      text NOT NULL,
  reason         text NOT NULL,
  run_no         integer,
  at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deployment_transitions_deployment_idx ON deployment_transitions (deployment_id, id);
ALTER TABLE deployment_transitions ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_transitions_isolation ON deployment_transitions
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- The reconciler is platform-wide but connects as the application role, which cannot bypass RLS. Rather than a
-- second, bypassing pool (which every bug in the reconciler would turn into a cross-tenant read), these two
-- functions run as their owner and answer only what the reconciler must know across tenants: which deployments are
-- due (tenant and id, nothing else) and how many slots open runs hold per worker. Everything else the reconciler
-- reads or writes goes through withTenant(tenantId), so RLS still binds it.
CREATE FUNCTION weir_due_deployments(max_rows integer)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d
  WHERE d.next_reconcile_at IS NOT NULL AND d.next_reconcile_at <= now()
  ORDER BY d.next_reconcile_at
  LIMIT max_rows
$$;

CREATE FUNCTION weir_worker_slots_in_use()
RETURNS TABLE (worker_id text, slots bigint)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT r.worker_id, sum(r.slots) FROM deployment_runs r WHERE r.ended_at IS NULL GROUP BY r.worker_id
$$;

-- Down Migration
DROP FUNCTION weir_worker_slots_in_use();
DROP FUNCTION weir_due_deployments(integer);
DROP TABLE deployment_transitions;
DROP TABLE deployment_runs;
DROP TABLE deployments;
