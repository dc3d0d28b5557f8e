-- Up Migration
-- The partitioner's scan (weir_partitioner_due) runs every second on every control-plane instance: an index over the
-- deployments it may look at, as deployments_due_idx serves the reconciler's.
CREATE INDEX deployments_partitioner_due_idx ON deployments (partitioner_next_at NULLS FIRST)
  WHERE status = 'RUNNING' AND partitioner_mode <> 'off';

-- Down Migration
DROP INDEX deployments_partitioner_due_idx;
