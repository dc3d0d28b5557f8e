-- Up Migration
-- Where each routing subtask was in its data input when it applied a rule (docs/rules.md, "Acknowledgements"):
-- per source partition ("topic:partition") the offset after the last record it had routed before. Null for acks
-- of jobs that do not report it.
ALTER TABLE rule_rollout_acks ADD COLUMN input_position jsonb;

-- Down Migration
ALTER TABLE rule_rollout_acks DROP COLUMN input_position;
