-- Up Migration
-- A restore a tenant asked for (docs/exactly-once.md): the next run placed for the deployment starts from this
-- savepoint, and the placement deletes the row in the same transaction (so exactly one run takes it).
CREATE TABLE deployment_restores (
  tenant_id                 text NOT NULL REFERENCES tenants(id),
  deployment_id             text PRIMARY KEY REFERENCES deployments(id) ON DELETE CASCADE,
  snapshot_id               text NOT NULL CHECK (length(snapshot_id) BETWEEN 1 AND 200),
  location                  text NOT NULL CHECK (length(location) BETWEEN 1 AND 1024),
  allow_non_restored_state  boolean NOT NULL DEFAULT false,
  requested_at              timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE deployment_restores ENABLE ROW LEVEL SECURITY;
CREATE POLICY deployment_restores_isolation ON deployment_restores
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE deployment_restores;
