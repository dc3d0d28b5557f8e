-- Up Migration
-- Responses of creates sent with an Idempotency-Key, replayed for 24 h. tenant_id is the tenant, or '_platform' for
-- the platform administrator's calls (tenant ids are generated as 't' + hex, so the scopes never meet); it has no
-- foreign key for that reason. RLS binds it like every tenant-owned table: withTenant(scope) sets app.tenant_id.
CREATE TABLE idempotency_keys (
  tenant_id    text NOT NULL CHECK (tenant_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  fingerprint  text NOT NULL,
  state        text NOT NULL CHECK (state IN ('pending', 'done')),
  status_code  integer,
  response     jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY idempotency_keys_isolation ON idempotency_keys
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Expired records of every tenant, removed in bounded batches by any control-plane instance. It runs as the owner
-- because the sweep crosses tenants; it only ever deletes rows past their expiry.
CREATE FUNCTION idempotency_keys_sweep(max_rows integer)
RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  WITH doomed AS (
    SELECT tenant_id, key FROM public.idempotency_keys WHERE expires_at < now() LIMIT max_rows FOR UPDATE SKIP LOCKED
  ), deleted AS (
    DELETE FROM public.idempotency_keys i USING doomed d WHERE i.tenant_id = d.tenant_id AND i.key = d.key RETURNING 1
  )
  SELECT count(*)::integer FROM deleted
$$;

-- Down Migration
DROP FUNCTION idempotency_keys_sweep(integer);
DROP TABLE idempotency_keys;
