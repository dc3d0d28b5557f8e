-- Up Migration
-- The installation a deployment belongs to: the WEIR_QUEUE_PREFIX of the control plane that accepted it. Commands
-- reach workers only through that prefix's queues, so only control planes sharing it may reconcile the deployment.
-- One installation per database makes this a constant; databases shared by several installations (test runs side
-- by side) keep each one's reconcilers to their own deployments.
ALTER TABLE deployments ADD COLUMN installation text NOT NULL DEFAULT 'weir' CHECK (installation ~ '^[a-z0-9_-]{1,100}$');
DROP INDEX deployments_due_idx;
CREATE INDEX deployments_due_idx ON deployments (installation, next_reconcile_at) WHERE next_reconcile_at IS NOT NULL;

DROP FUNCTION weir_due_deployments(integer);
CREATE FUNCTION weir_due_deployments(max_rows integer, for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d
  WHERE d.installation = for_installation AND d.next_reconcile_at IS NOT NULL AND d.next_reconcile_at <= now()
  ORDER BY d.next_reconcile_at
  LIMIT max_rows
$$;

-- Down Migration
DROP FUNCTION weir_due_deployments(integer, text);
CREATE FUNCTION weir_due_deployments(max_rows integer)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d
  WHERE d.next_reconcile_at IS NOT NULL AND d.next_reconcile_at <= now()
  ORDER BY d.next_reconcile_at
  LIMIT max_rows
$$;
DROP INDEX deployments_due_idx;
CREATE INDEX deployments_due_idx ON deployments (next_reconcile_at) WHERE next_reconcile_at IS NOT NULL;
ALTER TABLE deployments DROP COLUMN installation;
