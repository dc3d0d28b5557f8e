-- Up Migration
-- The parallelism a deployment holds against its tenant's maxTotalParallelism quota (its widest operator, the slots
-- a run takes): kept beside the jsonb parallelism so the quota check is one SUM under the tenant's lock.
ALTER TABLE deployments ADD COLUMN slots integer NOT NULL DEFAULT 1 CHECK (slots > 0);

-- Down Migration
ALTER TABLE deployments DROP COLUMN slots;
