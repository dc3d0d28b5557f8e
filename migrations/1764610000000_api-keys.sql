-- Up Migration
-- API keys: `weir_<id>_<secret>`. Only sha256(secret) is stored: the secret is 32 random bytes, so there is nothing
-- to brute-force and a slow KDF would only slow every request down (see docs/tenancy.md).
CREATE TABLE api_keys (
  id             text PRIMARY KEY CHECK (id ~ '^[a-f0-9]{24}$'),
  tenant_id      text NOT NULL REFERENCES tenants(id),
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  scope          text NOT NULL CHECK (scope IN ('read', 'write')),
  secret_sha256  bytea NOT NULL CHECK (length(secret_sha256) = 32),
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, id);
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY api_keys_isolation ON api_keys
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Authentication must find a key before it knows the tenant, and the application role sees no row without
-- app.tenant_id. Rather than a policy that opens api_keys to lookups by id (a policy cannot tell "authenticating" from
-- "listing"), this one function runs as its owner (the table owner, to whom RLS does not apply) and answers exactly
-- one question: the tenant, scope and secret hash of one live key, given its id. It never lists keys, never returns
-- a revoked key, and a caller still has to present the secret whose hash matches. search_path is pinned so that
-- no object planted in another schema can stand in for api_keys.
CREATE FUNCTION api_key_for_authentication(key_id text)
RETURNS TABLE (tenant_id text, scope text, secret_sha256 bytea)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT k.tenant_id, k.scope, k.secret_sha256 FROM public.api_keys k WHERE k.id = key_id AND k.revoked_at IS NULL
$$;

-- Down Migration
DROP FUNCTION api_key_for_authentication(text);
DROP TABLE api_keys;
