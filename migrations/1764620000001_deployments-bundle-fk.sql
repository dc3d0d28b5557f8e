-- Up Migration
-- A bundle a deployment (or one of its runs) uses cannot be deleted, even under races. The bundles table lands in
-- another migration range, which is why this is a migration of its own.
ALTER TABLE deployments
  ADD CONSTRAINT deployments_bundle_fk FOREIGN KEY (bundle_id) REFERENCES bundles(id) ON DELETE RESTRICT;
ALTER TABLE deployment_runs
  ADD CONSTRAINT deployment_runs_bundle_fk FOREIGN KEY (bundle_id) REFERENCES bundles(id) ON DELETE RESTRICT;

-- Down Migration
ALTER TABLE deployment_runs DROP CONSTRAINT deployment_runs_bundle_fk;
ALTER TABLE deployments DROP CONSTRAINT deployments_bundle_fk;
