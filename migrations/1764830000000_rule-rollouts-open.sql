-- Up Migration
-- A control plane that starts resumes collecting the acks of every rollout still in progress (docs/rules.md,
-- "Acknowledgements"). Rollouts are tenant rows under RLS; like weir_due_deployments, this function runs as its owner
-- and answers only what start-up must know across tenants: which deployments of this installation have a rollout in
-- progress, and their acks topic. Everything else goes through the tenant's own transaction.
CREATE FUNCTION weir_open_rule_rollouts(for_installation text)
RETURNS TABLE (tenant_id text, deployment_id text, acks_topic text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT r.tenant_id, r.deployment_id, r.acks_topic FROM rule_rollouts r
  JOIN deployments d ON d.id = r.deployment_id AND d.tenant_id = r.tenant_id
  WHERE r.phase = 'ROLLING_OUT' AND d.installation = for_installation
$$;

-- Down Migration
DROP FUNCTION weir_open_rule_rollouts(text);
