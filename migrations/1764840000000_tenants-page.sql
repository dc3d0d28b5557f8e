-- Up Migration
-- The platform administrator lists every tenant (GET /v1/tenants), but the application role sees a tenants row only
-- under that tenant's own app.tenant_id. Rather than a policy that opens tenants to every caller of the application
-- role (a policy cannot tell the admin's request from a tenant's), or a second, bypassing pool, this one function
-- runs as its owner (the table owner, to whom RLS does not apply) and answers one question: a page of tenants in id
-- order after a cursor. It returns the tenant's own columns only, reads nothing else and changes nothing; reading or
-- changing one tenant still goes through that tenant's transaction. The control plane calls it from the admin-only
-- route alone. search_path is pinned so that no object planted in another schema can stand in for tenants.
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

-- Down Migration
DROP FUNCTION weir_tenants_page(text, integer);
