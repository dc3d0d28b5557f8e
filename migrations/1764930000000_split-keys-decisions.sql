-- Up Migration
-- The partitioner splits hot keys of splittable windows (docs/partitioner.md, "Splits"): a decision that splits or
-- folds back keys without moving a key group is a SPLIT_KEYS (its key_groups: the split keys' own key groups).
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_kind_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_kind_check CHECK (
  (source = 'partitioner' AND kind IN ('MOVE_KEY_GROUPS', 'SPLIT_KEYS', 'DECLINED')) OR (source = 'autoscaler' AND kind IN ('SCALE_UP', 'SCALE_DOWN', 'HOLD'))
);

-- Down Migration
DELETE FROM deployment_scaling_decisions WHERE kind = 'SPLIT_KEYS';
ALTER TABLE deployment_scaling_decisions DROP CONSTRAINT deployment_scaling_decisions_kind_check;
ALTER TABLE deployment_scaling_decisions ADD CONSTRAINT deployment_scaling_decisions_kind_check CHECK (
  (source = 'partitioner' AND kind IN ('MOVE_KEY_GROUPS', 'DECLINED')) OR (source = 'autoscaler' AND kind IN ('SCALE_UP', 'SCALE_DOWN', 'HOLD'))
);
