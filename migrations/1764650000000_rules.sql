-- Up Migration
-- Rules as a resource of a deployment (docs/rules.md): immutable numbered rule-set versions, their rollouts to the
-- running job through its rules topic, and the per-subtask acknowledgements the job emits. Tenant-owned, bound by
-- row-level security like every tenant table. deployment_id carries no foreign key (another migration range).
CREATE TABLE rule_versions (
  tenant_id      text NOT NULL REFERENCES tenants(id),
  deployment_id  text NOT NULL CHECK (deployment_id ~ '^[A-Za-z0-9_-]{1,64}$'),
  version        integer NOT NULL CHECK (version >= 1),
  document       jsonb NOT NULL,
  rule_count     integer NOT NULL CHECK (rule_count >= 0),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, deployment_id, version)
);
ALTER TABLE rule_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY rule_versions_isolation ON rule_versions
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- One publication of a version's rules to the job. publish_ts is the Kafka timestamp of every record of the
-- rollout (strictly increasing per deployment), echoed in each acknowledgement: it tells which rollout an ack is for,
-- even when a rollback re-publishes a version that was rolled out before.
CREATE TABLE rule_rollouts (
  tenant_id        text NOT NULL REFERENCES tenants(id),
  id               text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  deployment_id    text NOT NULL,
  version          integer NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('ROLLOUT', 'ROLLBACK', 'SHADOW')),
  publish_ts       bigint NOT NULL,
  rules_topic      text NOT NULL,
  acks_topic       text NOT NULL,
  -- rule ids the job must acknowledge (the version's rules, plus deletions of rules the previous version had).
  expected_rule_ids text[] NOT NULL,
  rules_offset     text,
  phase            text NOT NULL CHECK (phase IN ('ROLLING_OUT', 'ACTIVE', 'FAILED', 'SUPERSEDED')),
  message          text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  UNIQUE (deployment_id, publish_ts),
  FOREIGN KEY (tenant_id, deployment_id, version) REFERENCES rule_versions (tenant_id, deployment_id, version)
);
CREATE INDEX rule_rollouts_deployment_idx ON rule_rollouts (tenant_id, deployment_id, created_at DESC);
CREATE INDEX rule_rollouts_open_idx ON rule_rollouts (phase) WHERE phase = 'ROLLING_OUT';
ALTER TABLE rule_rollouts ENABLE ROW LEVEL SECURITY;
CREATE POLICY rule_rollouts_isolation ON rule_rollouts
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- What one subtask of the routing operator did with one rule of a rollout (at-least-once from the job: replays
-- after a recovery are absorbed by the key).
CREATE TABLE rule_rollout_acks (
  tenant_id    text NOT NULL REFERENCES tenants(id),
  rollout_id   text NOT NULL REFERENCES rule_rollouts(id) ON DELETE CASCADE,
  operator_id  text NOT NULL,
  subtask      integer NOT NULL,
  parallelism  integer NOT NULL,
  rule_id      text NOT NULL,
  outcome      text NOT NULL CHECK (outcome IN ('applied', 'deleted', 'rejected')),
  problems     jsonb,
  acks_offset  text NOT NULL,
  acked_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (rollout_id, operator_id, subtask, rule_id)
);
ALTER TABLE rule_rollout_acks ENABLE ROW LEVEL SECURITY;
CREATE POLICY rule_rollout_acks_isolation ON rule_rollout_acks
  USING (tenant_id = current_setting('app.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('app.tenant_id', true));

-- Down Migration
DROP TABLE rule_rollout_acks;
DROP TABLE rule_rollouts;
DROP TABLE rule_versions;
