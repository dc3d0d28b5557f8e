-- Up Migration
-- Tenants own everything a user can see. Every tenant-owned table carries tenant_id and a row-level security
-- policy on current_setting('app.tenant_id'), set per transaction by @weir/db's withTenant(); the application
-- role is not the owner and has no BYPASSRLS, so a query that forgets its tenant filter still sees nothing foreign.
CREATE TABLE tenants (
  id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- Quotas: a tenant can never exceed these, whatever it asks for.
  max_deployments        integer NOT NULL DEFAULT 20 CHECK (max_deployments >= 0),
  max_total_parallelism  integer NOT NULL DEFAULT 64 CHECK (max_total_parallelism >= 0),
  max_bundle_bytes       bigint  NOT NULL DEFAULT 52428800 CHECK (max_bundle_bytes > 0),
  created_at  timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
-- A tenant sees only itself.
CREATE POLICY tenants_isolation ON tenants
  USING (id = current_setting('app.tenant_id', true))
  WITH CHECK (id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE tenants;
