-- Up Migration
-- Offboarding (DELETE /v1/tenants/{id}, docs/tenancy.md "Deleting a tenant"). The first step of a deletion marks the
-- tenant and revokes its keys in one transaction; the tenant's objects, topics and rows go in later steps, any of
-- which may fail and be resumed by the next DELETE. deleting_since is that mark: set once, never cleared (the row
-- goes with the last step), so every instance and every retry knows the tenant is on its way out.
ALTER TABLE tenants ADD COLUMN deleting_since timestamptz NULL;

-- The admin's list shows the mark (its return type changes, hence drop and create).
DROP FUNCTION weir_tenants_page(text, integer);
CREATE FUNCTION weir_tenants_page(after_id text, max_rows integer)
RETURNS TABLE (id text, name text, max_deployments integer, max_total_parallelism integer, max_bundle_bytes bigint, created_at timestamptz, deleting_since timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT t.id, t.name, t.max_deployments, t.max_total_parallelism, t.max_bundle_bytes, t.created_at, t.deleting_since
  FROM public.tenants t
  WHERE after_id IS NULL OR t.id > after_id
  ORDER BY t.id
  LIMIT max_rows
$$;

-- The reconciler never acts on a deployment of a tenant being deleted (its claim checks the mark too). Leaving such
-- deployments out here as well keeps them from filling every scan's batch: a claim that skips a deployment does
-- not reschedule it, so it would stay due and come back on every tick.
DROP FUNCTION weir_due_deployments(integer, text);
CREATE FUNCTION weir_due_deployments(max_rows integer, for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d JOIN tenants t ON t.id = d.tenant_id
  WHERE d.installation = for_installation AND d.next_reconcile_at IS NOT NULL AND d.next_reconcile_at <= now()
    AND t.deleting_since IS NULL
  ORDER BY d.next_reconcile_at
  LIMIT max_rows
$$;

-- Down Migration
DROP FUNCTION weir_due_deployments(integer, text);
CREATE FUNCTION weir_due_deployments(max_rows integer, for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.tenant_id, d.id FROM deployments d
  WHERE d.installation = for_installation AND d.next_reconcile_at IS NOT NULL AND d.next_reconcile_at <= now()
  ORDER BY d.next_reconcile_at
  LIMIT max_rows
$$;
DROP FUNCTION weir_tenants_page(text, integer);
CREATE FUNCTION weir_tenants_page(after_id text, max_rows integer)
RETURNS TABLE (id text, name text, max_deployments integer, max_total_parallelism integer, max_bundle_bytes bigint, created_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT t.id, t.name, t.max_deployments, t.max_total_parallelism, t.max_bundle_bytes, t.created_at
  FROM public.tenants t
  WHERE after_id IS NULL OR t.id > after_id
  ORDER BY t.id
  LIMIT max_rows
$$;
ALTER TABLE tenants DROP COLUMN deleting_since;
