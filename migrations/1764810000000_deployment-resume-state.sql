-- Up Migration
-- State across a deployment's lifecycle (docs/deployments.md, "State across runs").
-- deployment_restores holds what the next run starts from: `requested` by the tenant (a savepoint restore), or
-- `kept` by the reconciler when the deployment stops with state it will need again (the savepoint taken at suspend,
-- else the latest checkpoint). `reason` is said in the transitions that use it.
ALTER TABLE deployment_restores
  ADD COLUMN origin text NOT NULL DEFAULT 'requested' CHECK (origin IN ('requested', 'kept')),
  ADD COLUMN reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 1000);

-- A tenant's stop-with-savepoint in flight: { savepointId, runNo, requestedAt }. The desired state becomes
-- SUSPENDED only once the savepoint is on S3 (the reconciler does it); a failed savepoint clears it, the job runs on.
ALTER TABLE deployments ADD COLUMN pending_stop jsonb;

-- Down Migration
ALTER TABLE deployments DROP COLUMN pending_stop;
ALTER TABLE deployment_restores DROP COLUMN reason, DROP COLUMN origin;
