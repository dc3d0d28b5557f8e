-- Up Migration
-- Job bundles: immutable (tenant, name, version); the code lives on S3 under the tenant's prefix, its sha256 here.
-- Deployments reference bundles(id) (ON DELETE RESTRICT), so a bundle in use cannot be deleted, even under races.
CREATE TABLE bundles (
  id          text PRIMARY KEY CHECK (id ~ '^b[a-f0-9]{24}$'),
  tenant_id   text NOT NULL REFERENCES tenants(id),
  name        text NOT NULL CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$'),
  version     text NOT NULL CHECK (length(version) BETWEEN 1 AND 64),
  sha256      text NOT NULL CHECK (sha256 ~ '^[a-f0-9]{64}$'),
  size_bytes  bigint NOT NULL CHECK (size_bytes >= 0),
  s3_key      text NOT NULL,
  manifest    jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT bundles_version_unique UNIQUE (tenant_id, name, version)
);
ALTER TABLE bundles ENABLE ROW LEVEL SECURITY;
CREATE POLICY bundles_isolation ON bundles
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE bundles;
